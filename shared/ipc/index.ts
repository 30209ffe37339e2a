export * from './channels';
export * from './events';
export * from './wire';
export * from './client';
export * from './bridge';
