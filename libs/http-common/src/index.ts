export * from './context/request-context';
export * from './errors/error-bodies';
export * from './config/config';
export * from './health/metrics';
export * from './bootstrap/http-app';
