import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { hasPythonModule, runClient } from '@osc/testing';
import { type ApiServer, e2eModes, startApiServer } from './support/api-server';

const hasClient = hasPythonModule('mistralclient');

/** The real `mistral` CLI (Debian python3-mistralclient, no auth) manages environments from YAML and JSON files. */
describe.each(e2eModes().slice(0, 1))('mistral CLI environments (%s)', (mode) => {
  let server: ApiServer;
  let dir: string;

  beforeAll(async () => {
    server = await startApiServer(mode);
    dir = mkdtempSync(path.join(tmpdir(), 'cli-env-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await server?.close();
  });

  const mistral = (...args: string[]) =>
    runClient('mistral', ['--os-mistral-url', `${server.baseUrl}/v2`, ...args]);
  const file = (name: string, text: string) => {
    const p = path.join(dir, name);
    writeFileSync(p, text);
    return p;
  };

  it('creates, lists, shows, exports, updates and deletes an environment', async () => {
    expect(hasClient).toBe(true);
    const yaml = file(
      'env.yaml',
      'name: cli_env\ndescription: from the CLI\nvariables:\n  host: localhost\n  port: 8080\nscope: private\n',
    );

    const created = await mistral('environment-create', yaml, '-f', 'json');
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const shownCreated = JSON.parse(created.stdout);
    expect(shownCreated).toEqual({
      Name: 'cli_env',
      Description: 'from the CLI',
      Variables: expect.any(String),
      Scope: 'private',
      'Created at': expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
      'Updated at': '<none>',
    });
    expect(JSON.parse(shownCreated.Variables)).toEqual({ host: 'localhost', port: 8080 });

    const listed = await mistral('environment-list', '-f', 'json');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      {
        Name: 'cli_env',
        Description: 'from the CLI',
        Scope: 'private',
        'Created at': shownCreated['Created at'],
        'Updated at': '<none>',
      },
    ]);

    const shown = await mistral('environment-get', 'cli_env', '-f', 'json');
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toEqual(shownCreated);
    const exported = await mistral('environment-get', 'cli_env', '--export', '-f', 'json');
    expect(exported.code).toBe(0);
    const exportedBody = JSON.parse(exported.stdout);
    expect({ ...exportedBody, variables: JSON.parse(exportedBody.variables) }).toEqual({
      name: 'cli_env',
      description: 'from the CLI',
      scope: 'private',
      variables: { host: 'localhost', port: 8080 },
    });

    // An update from a JSON file: only what it names changes.
    const json = file(
      'env.json',
      JSON.stringify({ name: 'cli_env', variables: { host: '10.0.0.1', port: 9090, debug: true } }),
    );
    const updated = await mistral('environment-update', json, '-f', 'json');
    expect(updated.stderr).toBe('');
    expect(updated.code).toBe(0);
    const shownUpdated = JSON.parse(updated.stdout);
    expect(shownUpdated).toMatchObject({
      Name: 'cli_env',
      Description: 'from the CLI',
      Scope: 'private',
      'Created at': shownCreated['Created at'],
    });
    expect(shownUpdated['Updated at']).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(JSON.parse(shownUpdated.Variables)).toEqual({ host: '10.0.0.1', port: 9090, debug: true });

    const duplicate = await mistral('environment-create', yaml);
    expect(duplicate.code).not.toBe(0);
    expect(duplicate.stderr).toContain(
      "Duplicate entry for Environment ['name', 'project_id']: cli_env, <default-project>",
    );

    const deleted = await mistral('environment-delete', 'cli_env');
    expect(deleted.code).toBe(0);
    expect(deleted.stdout).toContain('Request to delete environment cli_env has been accepted.');
    const gone = await mistral('environment-get', 'cli_env');
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain('Environment not found [name=cli_env]');
    const emptyList = await mistral('environment-list', '-f', 'json');
    // The client prints an empty list as one blank row.
    expect(JSON.parse(emptyList.stdout)).toEqual([
      { Name: '', Description: '', Scope: '', 'Created at': '', 'Updated at': '' },
    ]);
  });
});
