import { InvalidInputError } from '@osc/errors';

/**
 * The file back end's layout, shared by the back end (which owns the files) and the API (which
 * hands out their paths): each volume is the file `volume-<id>` in the pool's directory, and the
 * pool reports where that directory is as `location_info` `file:<machine>:<directory>`.
 */
export const volumeFileName = (volumeId: string): string => `volume-${volumeId}`;

export const fileLocationInfo = (machine: string, directory: string): string =>
  `file:${machine}:${directory}`;

export function parseFileLocationInfo(value: unknown): { machine: string; directory: string } | null {
  if (typeof value !== 'string' || !value.startsWith('file:')) return null;
  const rest = value.slice('file:'.length);
  const colon = rest.indexOf(':');
  if (colon <= 0 || colon === rest.length - 1) return null;
  return { machine: rest.slice(0, colon), directory: rest.slice(colon + 1) };
}

/** `<directory>/volume-<id>`; the directory is absolute (the back end reports it resolved). */
export const volumeFilePath = (directory: string, volumeId: string): string =>
  `${directory.replace(/\/+$/, '')}/${volumeFileName(volumeId)}`;

/** What a connection needs to know about the volume besides its location. */
export interface ConnectionSubject {
  readonly volumeId: string;
  /** `host@backend#pool` of the volume, null while unplaced. */
  readonly host: string | null;
  readonly encrypted: boolean;
  readonly adminMetadata: Readonly<Record<string, string>>;
  /** The volume type's `cacheable` extra spec. */
  readonly cacheableSpec: string | null;
  /** Front-end QoS specs of the volume type (consumer `front-end` or `both`), null when none. */
  readonly frontEndQos: Readonly<Record<string, string>> | null;
}

/** os-brick's LocalConnector `connection_info`: `{"driver_volume_type": "local", "data": {...}}`. */
export interface LocalConnectionInfo {
  readonly driver_volume_type: 'local';
  readonly data: Record<string, unknown>;
}

/**
 * The connection the file back end offers to `connector` (the driver's `validate_connector` +
 * `initialize_connection`, then Cinder's `_parse_connection_options`). The back end serves only
 * os-brick's `local` protocol: the connector must be an object naming, as `host`, the machine
 * the pool's files are on (`location_info`); anything else is a 400 naming what it can serve.
 * `data` carries `device_path` and Cinder's added keys: `qos_specs` (front-end specs or null),
 * `access_mode` (`attached_mode` admin metadata, else `ro` when flagged readonly, else `rw`),
 * `encrypted`, `cacheable` (`<is> True` type spec) and `enforce_multipath` (from the connector).
 */
export function localConnection(
  subject: ConnectionSubject,
  locationInfo: unknown,
  connector: unknown,
): LocalConnectionInfo {
  const location = parseFileLocationInfo(locationInfo);
  const backend = subject.host === null ? '(none)' : (subject.host.split('#', 1)[0] ?? subject.host);
  if (location === null) {
    throw new InvalidInputError(
      `Invalid input received: Connector doesn't have required information: back end ${backend} reports no file location, so it cannot serve a connection.`,
    );
  }
  if (typeof connector !== 'object' || connector === null || Array.isArray(connector)) {
    throw new InvalidInputError(
      `Invalid input received: Connector doesn't have required information: the back end ${backend} serves 'local' connections only, to a connector object naming its host ${location.machine}.`,
    );
  }
  const c = connector as Record<string, unknown>;
  const host = c['host'];
  if (typeof host !== 'string' || host.length === 0) {
    throw new InvalidInputError(
      `Invalid input received: Connector doesn't have required information: host (the back end ${backend} serves 'local' connections on ${location.machine} only).`,
    );
  }
  if (host !== location.machine) {
    throw new InvalidInputError(
      `Invalid input received: Connector doesn't have required information: the back end ${backend} serves 'local' connections on host ${location.machine} only, not on ${host.slice(0, 255)}.`,
    );
  }
  const meta = subject.adminMetadata;
  return {
    driver_volume_type: 'local',
    data: {
      device_path: volumeFilePath(location.directory, subject.volumeId),
      qos_specs: subject.frontEndQos === null ? null : { ...subject.frontEndQos },
      access_mode: meta['attached_mode'] ?? (meta['readonly'] === 'True' ? 'ro' : 'rw'),
      encrypted: subject.encrypted,
      cacheable: subject.cacheableSpec === '<is> True',
      enforce_multipath: c['enforce_multipath'] ?? false,
    },
  };
}

/**
 * An attachment's `connection_info` as Cinder stores it (manager `_connection_create`): the
 * driver's `data` flattened beside `driver_volume_type`, plus `attachment_id` and
 * `enforce_multipath`.
 */
export function attachmentConnectionInfo(
  info: LocalConnectionInfo,
  attachmentId: string,
  connector: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  return {
    ...info.data,
    driver_volume_type: info.driver_volume_type,
    attachment_id: attachmentId,
    enforce_multipath: connector['enforce_multipath'] ?? false,
  };
}
