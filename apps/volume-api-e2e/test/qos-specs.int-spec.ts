import { randomUUID } from 'node:crypto';
import { Client, memberOf, MODES, newProject, startBlockStorage, type BlockStorage } from './harness';

/**
 * QoS specs (`/qos-specs`, BS-7.13) through HTTP: admin-only CRUD, keys set and unset, association
 * with volume types (seen as the types' `qos_specs_id`), and Cinder's refusals.
 */
describe.each(MODES)('qos specs (%s)', (mode) => {
  let bs: BlockStorage;
  let admin: Client;
  let member: Client;

  beforeAll(async () => {
    bs = await startBlockStorage(mode);
    admin = new Client(bs.base);
    member = admin.as(memberOf(newProject()));
  }, 120000);
  afterAll(async () => {
    await bs?.close();
  }, 60000);

  const volumeType = async (): Promise<{ id: string; name: string }> => {
    const r = await admin.post('/types', { volume_type: { name: `vt-${randomUUID().slice(0, 8)}` } });
    expect(r.status).toBe(200);
    return { id: r.body.volume_type.id, name: r.body.volume_type.name };
  };
  const createQos = async (body: Record<string, unknown>): Promise<any> => {
    const r = await admin.post('/qos-specs', { qos_specs: body });
    expect([r.status, r.text]).toEqual([200, expect.any(String)]);
    return r.body.qos_specs;
  };

  it('creates, shows, lists and deletes specs with their consumer and keys', async () => {
    const name = `qos-${randomUUID().slice(0, 8)}`;
    const created = await admin.post('/qos-specs', {
      qos_specs: { name, consumer: 'front-end', read_iops_sec: '2000' },
    });
    expect(created.status).toBe(200);
    const q = created.body.qos_specs;
    expect(created.body).toEqual({
      qos_specs: { id: q.id, name, consumer: 'front-end', specs: { read_iops_sec: '2000' } },
      links: [
        { rel: 'self', href: `${bs.base}/v3/${admin.caller.project}/qos-specs/${q.id}` },
        { rel: 'bookmark', href: `${bs.base}/${admin.caller.project}/qos-specs/${q.id}` },
      ],
    });
    const shown = await admin.get(`/qos-specs/${q.id}`);
    expect([shown.status, shown.body]).toEqual([200, created.body]);
    const listed = await admin.get('/qos-specs');
    expect(listed.status).toBe(200);
    expect(listed.body.qos_specs).toContainEqual(q);

    // consumer defaults to back-end (also when null); both is accepted; names are trimmed; null values are not stored.
    const dflt = await createQos({ name: `  ${name}-b  `, consumer: null, unset: null });
    expect([dflt.name, dflt.consumer, dflt.specs]).toEqual([`${name}-b`, 'back-end', {}]);
    const both = await createQos({ name: `${name}-c`, consumer: 'both' });
    expect(both.consumer).toBe('both');

    // the v2 path answers the same.
    const v2 = await admin.raw('GET', `${bs.base}/v2/${admin.caller.project}/qos-specs/${q.id}`);
    expect([v2.status, v2.body.qos_specs]).toEqual([200, q]);

    for (const id of [q.id, dflt.id, both.id]) {
      const del = await admin.delete(`/qos-specs/${id}?force=False`);
      expect([del.status, del.text]).toEqual([202, '']);
      const gone = await admin.get(`/qos-specs/${id}`);
      expect([gone.status, gone.body]).toEqual([
        404,
        { itemNotFound: { code: 404, message: `No such QoS spec ${id}.` } },
      ]);
    }
    expect((await admin.get('/qos-specs')).body.qos_specs.map((x: { id: string }) => x.id)).not.toContain(
      q.id,
    );
    // a deleted name can be used again.
    const again = await createQos({ name });
    expect(again.id).not.toBe(q.id);
    expect((await admin.delete(`/qos-specs/${again.id}`)).status).toBe(202);
  });

  it('lists newest first, with filters, sorting and pages', async () => {
    const prefix = `ql-${randomUUID().slice(0, 6)}`;
    const made: any[] = [];
    for (const [suffix, consumer] of [
      ['a', 'front-end'],
      ['b', 'both'],
      ['c', 'front-end'],
    ]) {
      made.push(await createQos({ name: `${prefix}-${suffix}`, consumer }));
      await new Promise((r) => setTimeout(r, 5)); // distinct created_at, so the default order is known
    }
    const ours = (r: { body: { qos_specs: { name: string }[] } }) =>
      r.body.qos_specs.map((x) => x.name).filter((n) => n.startsWith(prefix));
    expect(ours(await admin.get('/qos-specs'))).toEqual([`${prefix}-c`, `${prefix}-b`, `${prefix}-a`]);
    expect(ours(await admin.get('/qos-specs?sort=name:asc'))).toEqual([
      `${prefix}-a`,
      `${prefix}-b`,
      `${prefix}-c`,
    ]);
    expect((await admin.get(`/qos-specs?name=${prefix}-b`)).body.qos_specs).toEqual([made[1]]);
    expect((await admin.get(`/qos-specs?id=${made[2].id}`)).body.qos_specs).toEqual([made[2]]);
    expect(ours(await admin.get('/qos-specs?consumer=front-end&sort=name:desc'))).toEqual([
      `${prefix}-c`,
      `${prefix}-a`,
    ]);
    const page = await admin.get(`/qos-specs?sort=name:asc&limit=1&marker=${made[0].id}`);
    expect(page.body.qos_specs.map((x: { id: string }) => x.id)).toEqual([made[1].id]);
    expect(page.body.qos_specs_links).toEqual([
      {
        rel: 'next',
        href: `${bs.base}/v3/${admin.caller.project}/qos-specs?sort=name%3Aasc&limit=1&marker=${made[1].id}`,
      },
    ]);
    expect((await admin.get(`/qos-specs?marker=${randomUUID()}`)).status).toBe(404);
    expect((await admin.get('/qos-specs?sort=specs')).status).toBe(400);
    expect((await admin.get('/qos-specs?limit=-1')).status).toBe(400);
    for (const q of made) expect((await admin.delete(`/qos-specs/${q.id}`)).status).toBe(202);
  });

  it('refuses duplicates, bad bodies, unknown ids and non-admins', async () => {
    const name = `qos-${randomUUID().slice(0, 8)}`;
    const q = await createQos({ name });
    const dup = await admin.post('/qos-specs', { qos_specs: { name } });
    expect([dup.status, dup.body]).toEqual([
      409,
      { conflictingRequest: { code: 409, message: `QoS Specs ${name} already exists.` } },
    ]);

    const bad = async (body: unknown, message: string) => {
      const r = await admin.post('/qos-specs', body);
      expect([r.status, r.body]).toEqual([400, { badRequest: { code: 400, message } }]);
    };
    await bad({}, "'qos_specs' is a required property");
    await bad(
      { qos_specs: 'x' },
      "Invalid input for field/attribute qos_specs. Value: x. 'x' is not of type 'object'",
    );
    await bad(
      { qos_specs: { name: `${name}-x` }, extra: 1 },
      "Additional properties are not allowed ('extra' was unexpected)",
    );
    await bad(
      { qos_specs: { consumer: 'both' } },
      `Invalid input for field/attribute qos_specs. Value: {"consumer":"both"}. 'name' is a required property`,
    );
    await bad(
      { qos_specs: { name: '   ' } },
      "An invalid 'name' value was provided. The 'name' can not be empty.",
    );
    await bad(
      { qos_specs: { name: 'x'.repeat(256) } },
      "An invalid 'name' value was provided. The 'name' can not be greater than 255 characters.",
    );
    await bad(
      { qos_specs: { name: 7 } },
      "Invalid input for field/attribute name. Value: 7. 7 is not of type 'string'",
    );
    await bad(
      { qos_specs: { name: `${name}-x`, '': 'v' } },
      'Invalid input received: Key "" has 0 characters, less than 1.',
    );
    await bad(
      { qos_specs: { name: `${name}-x`, iops: 5 } },
      'Invalid input received: Value for key "iops" is not a string or unicode',
    );
    await bad(
      { qos_specs: { name: `${name}-x`, consumer: true } },
      'Invalid input received: Value for key "consumer" is not a string or unicode',
    );
    await bad(
      { qos_specs: { name: `${name}-x`, consumer: 'middle' } },
      "Invalid qos specs: Valid consumer of QoS specs are: QoSConsumerValues(default=<class 'oslo_versionedobjects.fields.UnspecifiedDefault'>,nullable=False,valid_values=('back-end', 'front-end', 'both'))",
    );
    // nothing was created by the refusals.
    expect(
      (await admin.get('/qos-specs')).body.qos_specs.filter((x: { name: string }) =>
        x.name.startsWith(`${name}-`),
      ),
    ).toEqual([]);

    const unknown = randomUUID();
    const notFound = { itemNotFound: { code: 404, message: `No such QoS spec ${unknown}.` } };
    for (const [method, path, body] of [
      ['GET', `/qos-specs/${unknown}`, undefined],
      ['PUT', `/qos-specs/${unknown}`, { qos_specs: { a: 'b' } }],
      ['PUT', `/qos-specs/${unknown}/delete_keys`, { keys: ['a'] }],
      ['DELETE', `/qos-specs/${unknown}`, undefined],
      ['GET', `/qos-specs/${unknown}/associations`, undefined],
      ['GET', `/qos-specs/${unknown}/associate?vol_type_id=${randomUUID()}`, undefined],
      ['GET', `/qos-specs/${unknown}/disassociate?vol_type_id=${randomUUID()}`, undefined],
      ['GET', `/qos-specs/${unknown}/disassociate_all`, undefined],
    ] as const) {
      const r = await admin.raw(method, admin.url(path), body);
      expect([method, path, r.status, r.body]).toEqual([method, path, 404, notFound]);
    }
    expect((await admin.get('/qos-specs/not-a-uuid')).status).toBe(404);

    for (const [method, path, body, rule] of [
      ['GET', '/qos-specs', undefined, 'get_all'],
      ['POST', '/qos-specs', { qos_specs: { name: 'm' } }, 'create'],
      ['GET', `/qos-specs/${q.id}`, undefined, 'get'],
      ['PUT', `/qos-specs/${q.id}`, { qos_specs: { a: 'b' } }, 'update'],
      ['PUT', `/qos-specs/${q.id}/delete_keys`, { keys: [] }, 'delete'],
      ['DELETE', `/qos-specs/${q.id}`, undefined, 'delete'],
      ['GET', `/qos-specs/${q.id}/associations`, undefined, 'get_all'],
      ['GET', `/qos-specs/${q.id}/associate?vol_type_id=${randomUUID()}`, undefined, 'update'],
      ['GET', `/qos-specs/${q.id}/disassociate_all`, undefined, 'update'],
    ] as const) {
      const r = await member.raw(method, member.url(path), body);
      expect([method, path, r.status]).toEqual([method, path, 403]);
      expect(r.body.forbidden.message).toContain(`volume_extension:qos_specs_manage:${rule}`);
    }
    expect((await admin.get(`/qos-specs/${q.id}`)).body.qos_specs).toEqual(q);
    expect((await admin.delete(`/qos-specs/${q.id}`)).status).toBe(202);
  });

  it('sets and unsets keys, all or nothing', async () => {
    const q = await createQos({
      name: `qos-${randomUUID().slice(0, 8)}`,
      consumer: 'front-end',
      read_iops_sec: '2000',
    });
    const set = await admin.put(`/qos-specs/${q.id}`, {
      qos_specs: { iops_bytes: '500', read_iops_sec: '3000' },
    });
    expect([set.status, set.body]).toEqual([
      200,
      { qos_specs: { iops_bytes: '500', read_iops_sec: '3000' } },
    ]);
    const consumer = await admin.put(`/qos-specs/${q.id}`, { qos_specs: { consumer: 'both' } });
    expect([consumer.status, consumer.body]).toEqual([200, { qos_specs: { consumer: 'both' } }]);
    expect((await admin.get(`/qos-specs/${q.id}`)).body.qos_specs).toEqual({
      ...q,
      consumer: 'both',
      specs: { iops_bytes: '500', read_iops_sec: '3000' },
    });
    const badSet = async (body: unknown, message: string) => {
      const r = await admin.put(`/qos-specs/${q.id}`, body);
      expect([r.status, r.body]).toEqual([400, { badRequest: { code: 400, message } }]);
    };
    await badSet({ specs: {} }, "'qos_specs' is a required property");
    await badSet(
      { qos_specs: { k: 5 } },
      "Invalid input for field/attribute k. Value: 5. 5 is not of type 'string', 'null'",
    );
    await badSet(
      { qos_specs: { '': 'v' } },
      `Invalid input for field/attribute qos_specs. Value: {"":"v"}. '' does not match any of the regexes: '^[a-zA-Z0-9-_:. /]{1,255}$'`,
    );
    expect(
      (await admin.put(`/qos-specs/${q.id}`, { qos_specs: { consumer: 'nowhere' } })).body.badRequest.message,
    ).toMatch(/^Invalid qos specs: Valid consumer/);
    // null values are stored; a null consumer leaves it alone.
    const nulls = await admin.put(`/qos-specs/${q.id}`, { qos_specs: { consumer: null, gone: null } });
    expect([nulls.status, nulls.body]).toEqual([200, { qos_specs: { consumer: null, gone: null } }]);
    expect((await admin.get(`/qos-specs/${q.id}`)).body.qos_specs).toEqual({
      ...q,
      consumer: 'both',
      specs: { iops_bytes: '500', read_iops_sec: '3000', gone: null },
    });
    expect((await admin.put(`/qos-specs/${q.id}/delete_keys`, { keys: ['gone'] })).status).toBe(202);

    const missing = await admin.put(`/qos-specs/${q.id}/delete_keys`, { keys: ['iops_bytes', 'nope'] });
    expect([missing.status, missing.body]).toEqual([
      404,
      { itemNotFound: { code: 404, message: `QoS spec ${q.id} has no spec with key nope.` } },
    ]);
    expect((await admin.get(`/qos-specs/${q.id}`)).body.qos_specs.specs).toEqual({
      iops_bytes: '500',
      read_iops_sec: '3000',
    });
    for (const [body, message] of [
      [{}, "'keys' is a required property"],
      [
        { keys: 'iops_bytes' },
        "Invalid input for field/attribute keys. Value: iops_bytes. 'iops_bytes' is not of type 'array'",
      ],
      [{ keys: [1] }, "Invalid input for field/attribute 0. Value: 1. 1 is not of type 'string'"],
      [
        { keys: ['k', 'k'] },
        "Invalid input for field/attribute keys. Value: ['k', 'k']. ['k', 'k'] has non-unique elements",
      ],
    ] as const) {
      const r = await admin.put(`/qos-specs/${q.id}/delete_keys`, body);
      expect([r.status, r.body]).toEqual([400, { badRequest: { code: 400, message } }]);
    }
    expect((await admin.put(`/qos-specs/${q.id}/delete_keys`, { keys: [] })).status).toBe(202);
    const unset = await admin.put(`/qos-specs/${q.id}/delete_keys`, { keys: ['iops_bytes'] });
    expect([unset.status, unset.text]).toEqual([202, '']);
    expect((await admin.get(`/qos-specs/${q.id}`)).body.qos_specs.specs).toEqual({ read_iops_sec: '3000' });
    expect((await admin.delete(`/qos-specs/${q.id}`)).status).toBe(202);
  });

  it('associates with volume types, shows them, refuses deletion while in use unless forced', async () => {
    const q = await createQos({ name: `qos-${randomUUID().slice(0, 8)}` });
    const other = await createQos({ name: `qos-${randomUUID().slice(0, 8)}` });
    const types = [await volumeType(), await volumeType(), await volumeType()];
    for (const t of types) {
      const r = await admin.get(`/qos-specs/${q.id}/associate?vol_type_id=${t.id}`);
      expect([r.status, r.text]).toEqual([202, '']);
    }
    // the same association again is a no-op; another spec cannot take the type.
    expect((await admin.get(`/qos-specs/${q.id}/associate?vol_type_id=${types[0]!.id}`)).status).toBe(202);
    const taken = await admin.get(`/qos-specs/${other.id}/associate?vol_type_id=${types[0]!.id}`);
    expect([taken.status, taken.body]).toEqual([
      400,
      {
        badRequest: {
          code: 400,
          message: `Invalid volume type: Type ${types[0]!.id} is already associated with another qos specs: ${q.id}`,
        },
      },
    ]);
    const noType = randomUUID();
    const missingType = await admin.get(`/qos-specs/${q.id}/associate?vol_type_id=${noType}`);
    expect([missingType.status, missingType.body]).toEqual([
      404,
      { itemNotFound: { code: 404, message: `Volume type ${noType} could not be found.` } },
    ]);
    const notUuid = await admin.get(`/qos-specs/${q.id}/associate?vol_type_id=notauuid`);
    expect([notUuid.status, notUuid.body]).toEqual([
      404,
      { itemNotFound: { code: 404, message: 'Volume type notauuid could not be found.' } },
    ]);
    for (const path of [`/qos-specs/${q.id}/associate`, `/qos-specs/${q.id}/disassociate?vol_type_id=`]) {
      const r = await admin.get(path);
      expect([r.status, r.body]).toEqual([
        400,
        { badRequest: { code: 400, message: 'Volume Type id must not be None.' } },
      ]);
    }

    const assoc = await admin.get(`/qos-specs/${q.id}/associations`);
    expect(assoc.status).toBe(200);
    expect(
      [...assoc.body.qos_associations].sort((a: { id: string }, b: { id: string }) =>
        a.id.localeCompare(b.id),
      ),
    ).toEqual(
      types
        .map((t) => ({ association_type: 'volume_type', id: t.id, name: t.name }))
        .sort((a, b) => a.id.localeCompare(b.id)),
    );
    expect((await admin.get(`/types/${types[1]!.id}`)).body.volume_type.qos_specs_id).toBe(q.id);
    expect((await admin.get(`/qos-specs/${other.id}/associations`)).body).toEqual({ qos_associations: [] });

    for (const force of ['', '?force=False', '?force=no']) {
      const inUse = await admin.delete(`/qos-specs/${q.id}${force}`);
      expect([inUse.status, inUse.body]).toEqual([
        400,
        { badRequest: { code: 400, message: 'Qos specs still in use.' } },
      ]);
    }
    const maybe = await admin.delete(`/qos-specs/${q.id}?force=maybe`);
    expect([maybe.status, maybe.body]).toEqual([
      400,
      { badRequest: { code: 400, message: "Value 'maybe' for 'force' is not a boolean." } },
    ]);
    expect((await admin.get(`/qos-specs/${q.id}`)).status).toBe(200);

    const dis = await admin.get(`/qos-specs/${q.id}/disassociate?vol_type_id=${types[0]!.id}`);
    expect([dis.status, dis.text]).toEqual([202, '']);
    expect((await admin.get(`/types/${types[0]!.id}`)).body.volume_type.qos_specs_id).toBeNull();
    // disassociating a type that uses another spec leaves it alone.
    expect((await admin.get(`/qos-specs/${other.id}/disassociate?vol_type_id=${types[1]!.id}`)).status).toBe(
      202,
    );
    expect((await admin.get(`/types/${types[1]!.id}`)).body.volume_type.qos_specs_id).toBe(q.id);
    expect(
      (await admin.get(`/qos-specs/${q.id}/associations`)).body.qos_associations
        .map((a: { id: string }) => a.id)
        .sort(),
    ).toEqual([types[1]!.id, types[2]!.id].sort());

    const all = await admin.get(`/qos-specs/${q.id}/disassociate_all`);
    expect([all.status, all.text]).toEqual([202, '']);
    expect((await admin.get(`/qos-specs/${q.id}/associations`)).body).toEqual({ qos_associations: [] });

    // forced deletion unlinks the types first.
    expect((await admin.get(`/qos-specs/${q.id}/associate?vol_type_id=${types[2]!.id}`)).status).toBe(202);
    expect((await admin.delete(`/qos-specs/${q.id}?force=True`)).status).toBe(202);
    expect((await admin.get(`/qos-specs/${q.id}`)).status).toBe(404);
    expect((await admin.get(`/types/${types[2]!.id}`)).body.volume_type.qos_specs_id).toBeNull();
    // the freed type can take another spec.
    expect((await admin.get(`/qos-specs/${other.id}/associate?vol_type_id=${types[2]!.id}`)).status).toBe(
      202,
    );
    expect((await admin.delete(`/qos-specs/${other.id}?force=true`)).status).toBe(202);
    for (const t of types) expect((await admin.delete(`/types/${t.id}`)).status).toBe(202);
  });
});
