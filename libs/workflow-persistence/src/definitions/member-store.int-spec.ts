import { ENGINE_KINDS, type TestDataSource, createTestDataSource } from '@osc/persistence';
import { definitionEntities } from './definition.entities';
import { definitionMigrations } from './definitions.migration';
import { WORKFLOW_DEFINITIONS } from './definition-tables';
import {
  type ListQuery,
  deleteDefinition,
  findDefinition,
  insertDefinition,
  listDefinitions,
  markerValues,
} from './definition-store';
import { findWorkflowForRun } from './definition-lookups';
import { deleteMember, findMember, insertMember, listMembers, updateMemberStatus } from './member-store';

const T = WORKFLOW_DEFINITIONS;
const NOW = '2024-05-01T10:00:00Z';

const wf = (name: string, project: string) => ({
  name: { value: name },
  namespace: { value: '' },
  project_id: { value: project },
  scope: { value: 'private' },
  definition: { value: `def ${name}` },
  checksum: { value: 'c' },
  spec: { value: { name }, kind: 'json' as const },
  input: { value: '' },
  interface: { value: '{"input": [], "output": []}' },
  tags: { value: [], kind: 'json' as const },
  created_at: { value: NOW, kind: 'timestamp' as const },
});

/** The members store and the visibility it gives, on both engines. */
describe.each(ENGINE_KINDS)('workflow members store (%s)', (kind) => {
  let t: TestDataSource;
  let wfId: string;

  beforeAll(async () => {
    t = await createTestDataSource(kind, { entities: definitionEntities, migrations: definitionMigrations });
    wfId = String((await insertDefinition(t.dataSource, T, wf('shared', 'owner')))!.id);
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  const visibleTo = async (project: string): Promise<string[]> => {
    const q: ListQuery = {
      visibility: { kind: 'project', projectId: project },
      filters: [],
      sort: [{ key: 'id', dir: 'asc' }],
      limit: 100,
      fields: [],
    };
    return (await listDefinitions(t.dataSource, T, q)).map((r) => String(r.id));
  };
  const runnable = (project: string) =>
    findWorkflowForRun(t.dataSource, {
      identifier: 'shared',
      namespace: '',
      projectId: project,
      visibility: { kind: 'project', projectId: project },
    });

  it('adds a pending member once, readable by owner and member only', async () => {
    const row = await insertMember(t.dataSource, {
      resourceId: wfId,
      projectId: 'owner',
      memberId: 'guest',
      now: NOW,
    });
    expect(row).toEqual({
      id: expect.any(String),
      resource_id: wfId,
      resource_type: 'workflow',
      project_id: 'owner',
      member_id: 'guest',
      status: 'pending',
      created_at: '2024-05-01 10:00:00',
      updated_at: null,
    });
    expect(
      await insertMember(t.dataSource, { resourceId: wfId, projectId: 'owner', memberId: 'guest', now: NOW }),
    ).toBeNull();
    expect(await listMembers(t.dataSource, wfId, 'owner')).toEqual([row]);
    expect(await listMembers(t.dataSource, wfId, 'guest')).toEqual([row]);
    expect(await listMembers(t.dataSource, wfId, 'other')).toEqual([]);
    expect(await findMember(t.dataSource, wfId, 'guest', 'other')).toBeNull();
    expect(await listMembers(t.dataSource, 'not-a-uuid', 'owner')).toEqual([]);
  });

  it('widens visibility only while accepted', async () => {
    expect(await visibleTo('guest')).toEqual([]);
    expect(await runnable('guest')).toBeNull();
    const accepted = await updateMemberStatus(t.dataSource, {
      resourceId: wfId,
      memberId: 'guest',
      status: 'accepted',
      now: '2024-05-02T00:00:00Z',
    });
    expect(accepted).toMatchObject({ status: 'accepted', updated_at: '2024-05-02 00:00:00' });
    expect(await visibleTo('guest')).toEqual([wfId]);
    expect(await visibleTo('other')).toEqual([]);
    expect((await runnable('guest'))?.id).toBe(wfId);
    const byId = await findDefinition(t.dataSource, T, {
      identifier: wfId,
      identifierIsId: true,
      namespaces: [],
      visibility: { kind: 'project', projectId: 'guest' },
      callerProjectId: 'guest',
    });
    expect(byId?.project_id).toBe('owner');
    expect(
      await markerValues(t.dataSource, T, wfId, ['id'], { kind: 'project', projectId: 'guest' }),
    ).not.toBeNull();
    await updateMemberStatus(t.dataSource, {
      resourceId: wfId,
      memberId: 'guest',
      status: 'rejected',
      now: NOW,
    });
    expect(await visibleTo('guest')).toEqual([]);
    expect(await runnable('guest')).toBeNull();
    expect(
      await updateMemberStatus(t.dataSource, {
        resourceId: wfId,
        memberId: 'nobody',
        status: 'accepted',
        now: NOW,
      }),
    ).toBeNull();
  });

  it('deletes a member for its owner only, and members with their workflow', async () => {
    expect(await deleteMember(t.dataSource, wfId, 'guest', 'guest')).toBe(false);
    expect(await deleteMember(t.dataSource, wfId, 'guest', 'owner')).toBe(true);
    expect(await deleteMember(t.dataSource, wfId, 'guest', 'owner')).toBe(false);
    await insertMember(t.dataSource, { resourceId: wfId, projectId: 'owner', memberId: 'guest', now: NOW });
    expect(await deleteDefinition(t.dataSource, T, wfId)).toBe(true);
    expect(await listMembers(t.dataSource, wfId, 'owner')).toEqual([]);
  });
});
