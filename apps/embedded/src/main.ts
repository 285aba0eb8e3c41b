import 'reflect-metadata';
import { runProcess } from '@osc/platform';
import { startEmbedded } from './index';

/** `npm start`: the whole product in one process, no servers to install. */
runProcess('embedded', async (log) => {
  const product = await startEmbedded(process.env);
  log.info(`embedded mode ready: workflow API http://127.0.0.1:${product.workflowApiPort}/ , block storage API http://127.0.0.1:${product.volumeApiPort}/`);
  return product;
});
