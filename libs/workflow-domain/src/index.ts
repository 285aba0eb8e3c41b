export * from './dsl';
export * from './engine';
