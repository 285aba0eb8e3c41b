import path from 'node:path';
import { consoleDirFrom } from './config';

describe('the console folder by default', () => {
  const root = path.resolve('/srv/osc');
  it.each([
    ['the sources', 'apps/workflow-api/src'],
    ['the embedded bundle (npm start)', 'dist/apps/embedded'],
    ['the workflow-api bundle', 'dist/apps/workflow-api'],
  ])('is <repository>/dist/console from %s', (_, from) => {
    expect(consoleDirFrom(path.join(root, from))).toBe(path.join(root, 'dist/console'));
  });
});
