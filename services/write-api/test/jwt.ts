import { createHmac, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';

/**
 * Real JWTs, signed here with node:crypto (not with the library the services verify with), so the
 * tests check the verifier against an independent signer.
 */
const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Seconds since the epoch, as JWT claims count time. */
export const nowS = () => Math.floor(Date.now() / 1000);

export type Claims = Record<string, unknown>;

/** An HS256 token; `exp` defaults to 10 minutes from now. */
export function hs256(secret: string, claims: Claims, header: Claims = {}): string {
  const input = `${part({ alg: 'HS256', typ: 'JWT', ...header })}.${part({ exp: nowS() + 600, ...claims })}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

/** An unsigned token (`alg: none`), which no verifier may accept. */
export function unsigned(claims: Claims): string {
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ exp: nowS() + 600, ...claims })}.`;
}

export interface RsaKey {
  readonly kid: string;
  readonly privateKey: KeyObject;
  /** The public half as a JWKS document, as a key server or a file would hold it. */
  readonly jwks: { keys: Record<string, unknown>[] };
}

/** A fresh RS256 key pair. */
export function rsaKey(kid: string): RsaKey {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
  return { kid, privateKey, jwks: { keys: [{ ...jwk, kid, alg: 'RS256', use: 'sig' }] } };
}

/** An RS256 token signed with `key`; `exp` defaults to 10 minutes from now. */
export function rs256(key: Pick<RsaKey, 'kid' | 'privateKey'>, claims: Claims): string {
  const input = `${part({ alg: 'RS256', typ: 'JWT', kid: key.kid })}.${part({ exp: nowS() + 600, ...claims })}`;
  return `${input}.${sign('sha256', Buffer.from(input), key.privateKey).toString('base64url')}`;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
