// TypeScript's classic "node" resolution (kept for CommonJS output and @swc-node/register) does not
// read package.json "exports", so PGlite's subpath entry points are declared here by their files.
declare module '@electric-sql/pglite/node-postgres' {
  export * from '@electric-sql/pglite/dist/node-postgres/index';
}
declare module '@electric-sql/pglite/contrib/pgcrypto' {
  export * from '@electric-sql/pglite/dist/contrib/pgcrypto';
}
