import {
  parseCreateQosSpecs,
  parseQosDeleteKeys,
  parseQosVolumeTypeId,
  parseUpdateQosSpecs,
  qosAssociationsView,
  qosForceFlag,
  qosSpecsView,
} from './qos';

const message = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('did not throw');
};

describe('QoS specs validation', () => {
  it('parses creation: trimmed name, default consumer, string items, null items dropped', () => {
    expect(parseCreateQosSpecs({ qos_specs: { name: ' q ', read_iops_sec: '2000', x: null } })).toEqual({
      name: 'q',
      consumer: 'back-end',
      specs: { read_iops_sec: '2000' },
    });
    expect(parseCreateQosSpecs({ qos_specs: { name: 'q', consumer: 'both' } }).consumer).toBe('both');
    expect(parseCreateQosSpecs({ qos_specs: { name: 'q', consumer: null } }).consumer).toBe('back-end');
  });

  it('refuses bad creation bodies with Cinder messages', () => {
    expect(message(() => parseCreateQosSpecs(undefined))).toBe(
      "Missing required element 'qos_specs' in request body.",
    );
    expect(message(() => parseCreateQosSpecs({}))).toBe("'qos_specs' is a required property");
    expect(message(() => parseCreateQosSpecs({ qos_specs: { name: '' } }))).toBe(
      "An invalid 'name' value was provided. The 'name' can not be empty.",
    );
    expect(message(() => parseCreateQosSpecs({ qos_specs: { name: 'q', k: 1 } }))).toBe(
      'Invalid input received: Value for key "k" is not a string or unicode',
    );
    expect(message(() => parseCreateQosSpecs({ qos_specs: { name: 'q', k: 'v'.repeat(256) } }))).toBe(
      'Invalid input received: Value for key "k" has 256 characters, more than 255.',
    );
    expect(message(() => parseCreateQosSpecs({ qos_specs: { name: 'q', consumer: 'x' } }))).toMatch(
      /^Invalid qos specs: Valid consumer of QoS specs are: /,
    );
  });

  it('parses updates: consumer apart, null values kept, the request echoed', () => {
    expect(parseUpdateQosSpecs({ qos_specs: { consumer: 'front-end', a: 'b', c: null } })).toEqual({
      consumer: 'front-end',
      specs: { a: 'b', c: null },
      echo: { consumer: 'front-end', a: 'b', c: null },
    });
    expect(parseUpdateQosSpecs({ qos_specs: { consumer: null } })).toEqual({
      specs: {},
      echo: { consumer: null },
    });
    expect(message(() => parseUpdateQosSpecs({ qos_specs: { 'a!': 'b' } }))).toMatch(
      /does not match any of the regexes/,
    );
    expect(message(() => parseUpdateQosSpecs({ qos_specs: {}, x: 1 }))).toBe(
      "Additional properties are not allowed ('x' was unexpected)",
    );
  });

  it('parses delete_keys, vol_type_id and force', () => {
    expect(parseQosDeleteKeys({ keys: ['a', 'b'] })).toEqual(['a', 'b']);
    expect(message(() => parseQosDeleteKeys({ keys: ['a', 'a'] }))).toBe(
      "Invalid input for field/attribute keys. Value: ['a', 'a']. ['a', 'a'] has non-unique elements",
    );
    expect(message(() => parseQosDeleteKeys(null))).toBe("'keys' is a required property");
    expect(message(() => parseQosVolumeTypeId(''))).toBe('Volume Type id must not be None.');
    expect([qosForceFlag(undefined), qosForceFlag('False'), qosForceFlag(' yes ')]).toEqual([
      false,
      false,
      true,
    ]);
    expect(message(() => qosForceFlag('maybe'))).toBe("Value 'maybe' for 'force' is not a boolean.");
  });

  it('renders specs with links and associations', () => {
    const links = { baseUrl: 'http://h:8776', projectSegment: 'p1', apiPrefix: 'v3' as const };
    expect(qosSpecsView({ id: 'i', name: 'n', consumer: 'both', specs: { a: 'b' } }, links)).toEqual({
      qos_specs: { id: 'i', name: 'n', consumer: 'both', specs: { a: 'b' } },
      links: [
        { rel: 'self', href: 'http://h:8776/v3/p1/qos-specs/i' },
        { rel: 'bookmark', href: 'http://h:8776/p1/qos-specs/i' },
      ],
    });
    expect(qosAssociationsView([{ id: 't', name: 'vt' }])).toEqual({
      qos_associations: [{ association_type: 'volume_type', name: 'vt', id: 't' }],
    });
  });
});
