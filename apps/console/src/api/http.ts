/**
 * The console's HTTP client. Every call goes to the origin that served the page: the Mistral API
 * itself (`/v2/...`) and the block-storage pass-through (`/console/block-storage/...`).
 *
 * Authentication is the APIs' own: in keystone mode the user pastes a token, kept in
 * sessionStorage (gone when the tab closes) and sent as `X-Auth-Token`; in noauth and headers
 * mode the console sends none (a gateway adds the headers).
 */

const TOKEN_KEY = 'osc-console-token';

export interface ConsoleConfig {
  readonly auth_mode: 'noauth' | 'headers' | 'keystone';
  readonly block_storage: boolean;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export const storedToken = (): string | null => sessionStorage.getItem(TOKEN_KEY);

export function storeToken(token: string | null): void {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export function authHeaders(): Record<string, string> {
  const token = storedToken();
  return token ? { 'X-Auth-Token': token } : {};
}

/** The message an OpenStack error body carries (Mistral's faultstring, Cinder's fault, Keystone's error). */
function errorMessage(status: number, text: string): string {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    if (typeof body['faultstring'] === 'string') return body['faultstring'];
    for (const v of Object.values(body)) {
      if (v && typeof v === 'object' && typeof (v as { message?: unknown }).message === 'string')
        return (v as { message: string }).message;
    }
    if (typeof body['message'] === 'string') return body['message'];
  } catch {
    /* not JSON */
  }
  return text.trim() || `HTTP ${status}`;
}

export async function request<T>(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const res = await fetch(path, {
    method,
    headers: {
      Accept: 'application/json',
      ...authHeaders(),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new ApiError(res.status, errorMessage(res.status, text));
  return (text ? JSON.parse(text) : undefined) as T;
}

export const getJson = <T>(path: string, headers?: Record<string, string>) =>
  request<T>('GET', path, undefined, headers);

export const loadConfig = () => getJson<ConsoleConfig>('/console/config.json');
