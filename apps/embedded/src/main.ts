import 'reflect-metadata';
import { runProcess } from '@osc/platform';
import { startEmbedded } from './index';

/** `npm start`: the whole product in one process, no servers to install. */
runProcess(async () => {
  const product = await startEmbedded(process.env);
  process.stderr.write(
    `embedded mode ready: workflow API http://127.0.0.1:${product.workflowApiPort}/ , block storage API http://127.0.0.1:${product.volumeApiPort}/\n`,
  );
  return product;
});
