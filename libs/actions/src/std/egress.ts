import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent } from 'undici';

/**
 * Where std.http may connect. `deniedNetworks` are CIDRs (`169.254.0.0/16`, `::1/128`); empty (the
 * default) allows everything. Checked on every connection, redirects included, against the
 * addresses the connection really uses (the agent's DNS lookup is filtered), so a host name cannot be
 * re-resolved to a denied address between the check and the connection.
 */
export class EgressPolicy {
  private readonly blocked = new BlockList();
  readonly active: boolean;

  constructor(readonly deniedNetworks: readonly string[] = []) {
    for (const cidr of deniedNetworks) {
      const [net, bits] = cidr.split('/');
      const type = isIP(net ?? '') === 6 ? 'ipv6' : 'ipv4';
      if (!net || isIP(net) === 0) throw new Error(`invalid denied network ${cidr}`);
      this.blocked.addSubnet(net, bits === undefined ? (type === 'ipv6' ? 128 : 32) : Number(bits), type);
    }
    this.active = deniedNetworks.length > 0;
  }

  isDenied(address: string): boolean {
    const family = isIP(address);
    if (family === 0) return false;
    return this.blocked.check(address, family === 6 ? 'ipv6' : 'ipv4');
  }

  /** A `lookup` for net/tls.connect that fails when every resolved address is denied and drops denied ones. */
  readonly lookup = (
    hostname: string,
    options: object,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const allowed = addresses.filter((a) => !this.isDenied(a.address));
      if (allowed.length === 0) {
        return callback(
          Object.assign(new Error(`Host '${hostname}' resolves to a denied network.`), { code: 'EDENIED' }),
          [],
        );
      }
      if ((options as { all?: boolean }).all) return callback(null, allowed);
      const [first] = allowed as [LookupAddress];
      callback(null, first.address, first.family);
    });
  };

  private agents = new Map<string, Agent>();

  /** The shared agent for one TLS mode under this policy. */
  agent(mode: 'verify' | 'insecure'): Agent {
    let agent = this.agents.get(mode);
    if (!agent) {
      agent = this.newAgent(mode === 'insecure' ? { rejectUnauthorized: false } : {});
      this.agents.set(mode, agent);
    }
    return agent;
  }

  isShared(agent: unknown): boolean {
    return [...this.agents.values()].includes(agent as Agent);
  }

  newAgent(tls: { rejectUnauthorized?: boolean; ca?: Buffer }): Agent {
    return new Agent({
      keepAliveTimeout: 4_000,
      connect: { ...tls, ...(this.active ? { lookup: this.lookup } : {}) },
    });
  }
}
