export * from './dsl';
