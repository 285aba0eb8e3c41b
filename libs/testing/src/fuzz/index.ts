export * from './rng';
export * from './runner';
export * from './route-cases';
export * from './values';
