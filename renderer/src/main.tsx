import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClientProvider } from '@tanstack/react-query';
import { App } from './app/App';
import { connect } from './lib/connect';
import { ConnectionProvider } from './lib/connection-context';
import { createQueryClient } from './lib/query-client';
import { applyTheme, useTheme } from './lib/theme';
import './styles/theme.css';
import './styles/layout.css';
import './styles/components.css';
import './styles/measure.css';
import './styles/containers.css';

// before the first paint, so a dark choice never flashes light
applyTheme(useTheme.getState().choice);

const connection = connect();
const queryClient = createQueryClient();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <ConnectionProvider value={connection}>
      <QueryClientProvider client={queryClient}>
        <App />
      </QueryClientProvider>
    </ConnectionProvider>
  </StrictMode>,
);
