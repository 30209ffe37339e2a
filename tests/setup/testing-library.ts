// findBy*/waitFor wait for what the real engine (over fakes) does; on a loaded 2-core machine that can take more than
// testing-library's default second, and a test must not fail for the machine's speed.
import { configure } from '@testing-library/dom';

configure({ asyncUtilTimeout: 10_000 });
