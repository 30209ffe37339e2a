// findBy*/waitFor wait for what the real engine (over fakes) does; on a loaded 2-core machine that can take more than
// testing-library's default second, and a test must not fail for the machine's speed.
import { configure } from '@testing-library/dom';
import { beforeAll } from 'vitest';
import { resetUiStores } from '../../renderer/src/lib/ui-store';

configure({ asyncUtilTimeout: 10_000 });

// The component files share one module graph per worker (vitest.config.ts, project "ui"): each file starts from the
// UI stores' initial state, as it would with a graph of its own.
beforeAll(() => resetUiStores());
