import { randomUUID } from 'node:crypto';
import { Client, memberOf, MODES, newProject, startBlockStorage, type BlockStorage } from './harness';

/**
 * Volume create naming a source or container that does not exist (BS-7.7.2, BS-7.7.3): Cinder looks
 * each one up and answers its not-found fault (404 naming the kind and id); fields of later
 * microversions are ignored below them (and refused from 3.53, strict bodies).
 */
describe.each(MODES)('volume create with unknown sources (%s)', (mode) => {
  let bs: BlockStorage;
  let member: Client;

  beforeAll(async () => {
    bs = await startBlockStorage(mode);
    member = new Client(bs.base).as(memberOf(newProject()));
  });
  afterAll(async () => {
    await bs?.close();
  });

  const notFound = (message: string) => ({ itemNotFound: { code: 404, message } });

  it('answers 404 for an unknown backup_id from 3.47, ignores it at 3.46 and refuses it as unknown there from 3.53', async () => {
    const id = randomUUID();
    const r = await member.at('3.47').post('/volumes', { volume: { size: 1, backup_id: id } });
    expect([r.status, r.body]).toEqual([404, notFound(`Backup ${id} could not be found.`)]);
    const ignored = await member.at('3.46').post('/volumes', { volume: { size: 1, backup_id: id } });
    expect(ignored.status).toBe(202);
    expect(ignored.body.volume.status).toBe('creating');
  });

  it('answers 404 for an unknown imageRef (or image_id), group_id (3.13) and consistencygroup_id', async () => {
    const id = randomUUID();
    for (const key of ['imageRef', 'image_id']) {
      const r = await member.post('/volumes', { volume: { size: 1, [key]: id } });
      expect([r.status, r.body]).toEqual([404, notFound(`Image ${id} could not be found.`)]);
    }
    const g = await member.at('3.13').post('/volumes', { volume: { size: 1, group_id: id } });
    expect([g.status, g.body]).toEqual([404, notFound(`Group ${id} could not be found.`)]);
    const cg = await member.post('/volumes', { volume: { size: 1, consistencygroup_id: id } });
    expect([cg.status, cg.body]).toEqual([404, notFound(`ConsistencyGroup ${id} could not be found.`)]);
    expect((await member.at('3.12').post('/volumes', { volume: { size: 1, group_id: id } })).status).toBe(
      202,
    );
  });

  it('refuses two sources at once with 400 before looking any of them up', async () => {
    const r = await member
      .at('3.47')
      .post('/volumes', { volume: { snapshot_id: randomUUID(), backup_id: randomUUID() } });
    expect(r.status).toBe(400);
    expect(r.body.badRequest.message).toMatch(/^Invalid input received: .*mutually exclusive/);
    const bad = await member.at('3.47').post('/volumes', { volume: { size: 1, backup_id: 'not-a-uuid' } });
    expect(bad.status).toBe(400);
  });
});
