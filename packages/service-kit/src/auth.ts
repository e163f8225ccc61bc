import type { FastifyReply, FastifyRequest } from 'fastify';
import type { JSONWebKeySet, JWTPayload, JWTVerifyGetKey } from 'jose';
import type { AuthConfig } from './config.js';
import { EggmeshError } from './errors.js';

/** The scope that grants every write; `eggmesh:write:<entity>` grants the writes of one entity. */
export const WRITE_SCOPE = 'eggmesh:write';
/** The scope reads need when `EGGMESH_AUTH_READS=true`. */
export const READ_SCOPE = 'eggmesh:read';

/** What a request asks to do. */
export type Access = { readonly kind: 'write'; readonly entity: string } | { readonly kind: 'read' };

/** Who a verified token speaks for and what it grants. */
export interface Principal {
  readonly subject: string | undefined;
  readonly scopes: ReadonlySet<string>;
}

const REALM = 'Bearer realm="eggmesh"';

/** An answer refused for want of a (valid) token or scope, with its `WWW-Authenticate` challenge. */
export class AuthError extends EggmeshError {
  readonly challenge: string;
  constructor(code: 'EGGMESH_UNAUTHENTICATED' | 'EGGMESH_FORBIDDEN', message: string, challenge: string) {
    super(code, [], {}, message);
    this.name = 'AuthError';
    this.challenge = challenge;
  }
}

const unauthenticated = (message: string, invalid: boolean) =>
  new AuthError(
    'EGGMESH_UNAUTHENTICATED',
    message,
    invalid ? `${REALM}, error="invalid_token", error_description="${message}"` : REALM,
  );

/** The scopes of a token: OAuth's space-separated `scope` string (an array of strings is taken too). */
function scopesOf(payload: JWTPayload): ReadonlySet<string> {
  const claim = payload.scope;
  if (typeof claim === 'string') return new Set(claim.split(' ').filter((s) => s !== ''));
  if (Array.isArray(claim)) return new Set(claim.filter((s): s is string => typeof s === 'string'));
  return new Set();
}

/** Why jose refused a token, in words a client can act on (never the token itself). */
function refusal(error: unknown): AuthError {
  const code = (error as { code?: unknown } | null)?.code;
  const claim = (error as { claim?: unknown } | null)?.claim;
  if (code === 'ERR_JWT_EXPIRED') return unauthenticated('the token has expired', true);
  if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED') {
    if (claim === 'nbf') return unauthenticated('the token is not valid yet (nbf)', true);
    if (claim === 'iss') return unauthenticated('the token is from another issuer (iss)', true);
    if (claim === 'aud') return unauthenticated('the token is for another audience (aud)', true);
    return unauthenticated(`the token's ${String(claim)} claim is not valid`, true);
  }
  if (code === 'ERR_JOSE_ALG_NOT_ALLOWED')
    return unauthenticated('the token is signed with an algorithm not accepted here', true);
  return unauthenticated('the token is not valid (malformed, or its signature does not verify)', true);
}

/**
 * True when each part of a compact JWT is canonical base64url: no padding, and the text the decoded
 * bytes encode back to. A token that differs from that text (a trailing `=`, a last character whose
 * unused bits are set) decodes to the same bytes, so it is a second spelling of a token someone
 * signed: refused, so that a token has one form (logs, deny lists and caches compare text).
 */
function isCanonical(token: string): boolean {
  const parts = token.split('.');
  return (
    parts.length === 3 &&
    parts.every(
      (part) =>
        /^[A-Za-z0-9_-]*$/.test(part) && Buffer.from(part, 'base64url').toString('base64url') === part,
    )
  );
}

/**
 * The time claims jose does not insist on: `exp` must be there, no later than `maxLifetimeS` from now
 * nor from `iat`, and `iat` must not be in the future (beyond the skew). A token that never expires,
 * or only in centuries, would stay a key for good once leaked.
 */
function checkLifetime(payload: JWTPayload, config: Pick<AuthConfig, 'clockSkewS' | 'maxLifetimeS'>): void {
  const now = Math.floor(Date.now() / 1000);
  const { exp, iat } = payload;
  if (typeof exp !== 'number') throw unauthenticated('the token has no expiry (exp)', true);
  if (iat !== undefined && iat > now + config.clockSkewS)
    throw unauthenticated('the token is issued in the future (iat)', true);
  const from = Math.min(now, iat ?? now);
  if (exp - from > config.maxLifetimeS + config.clockSkewS)
    throw unauthenticated(`the token is valid for longer than ${config.maxLifetimeS} s (exp)`, true);
}

/** jose, loaded on the first token: a service without auth (the default) never loads it. */
let josePromise: Promise<typeof import('jose')> | undefined;
const jose = () => {
  josePromise ??= import('jose');
  return josePromise;
};

/**
 * Verifies bearer JWTs with the keys of the configuration: an HS256 secret, or the RS256/ES256 keys of
 * a JWKS (file read at boot, or https URL fetched and cached by jose). Only canonical tokens are read;
 * `exp` is required and capped (checkLifetime), `exp`, `nbf` and `iat` are honoured with `clockSkewS`
 * of leeway; `iss`/`aud` when configured. The one verifier of every service.
 */
export class Authenticator {
  readonly enabled: boolean;
  readonly reads: boolean;
  private readonly lifetime: Pick<AuthConfig, 'clockSkewS' | 'maxLifetimeS'>;
  private readonly verifyToken: (token: string) => Promise<JWTPayload>;

  constructor(config: AuthConfig) {
    this.enabled = config.mode === 'jwt';
    this.reads = this.enabled && config.reads;
    this.lifetime = { clockSkewS: config.clockSkewS, maxLifetimeS: config.maxLifetimeS };
    const options = {
      clockTolerance: config.clockSkewS,
      ...(config.issuer === undefined ? {} : { issuer: config.issuer }),
      ...(config.audience === undefined ? {} : { audience: config.audience }),
    };
    if (config.secret !== undefined) {
      const key = new TextEncoder().encode(config.secret);
      this.verifyToken = async (token) =>
        (await (await jose()).jwtVerify(token, key, { ...options, algorithms: ['HS256'] })).payload;
    } else if (config.jwks !== undefined || config.jwksUrl !== undefined) {
      const { jwks, jwksUrl } = config;
      let keys: JWTVerifyGetKey | undefined;
      this.verifyToken = async (token) => {
        const { createLocalJWKSet, createRemoteJWKSet, jwtVerify } = await jose();
        // One key set for the process: the remote one caches what it fetched.
        keys ??=
          jwks !== undefined
            ? createLocalJWKSet(jwks as unknown as JSONWebKeySet)
            : createRemoteJWKSet(new URL(jwksUrl as string));
        return (await jwtVerify(token, keys, { ...options, algorithms: ['RS256', 'ES256'] })).payload;
      };
    } else {
      this.verifyToken = async () => {
        throw unauthenticated('the server has no key to verify tokens with', false);
      };
    }
  }

  /** The principal of an `Authorization: Bearer <jwt>` header; AuthError (401) when there is none or it is bad. */
  async authenticate(header: string | undefined): Promise<Principal> {
    if (header === undefined || header === '') {
      throw unauthenticated('send a bearer token: Authorization: Bearer <jwt>', false);
    }
    const match = /^Bearer +([A-Za-z0-9\-_.~+/]+=*) *$/i.exec(header);
    if (!match) throw unauthenticated("the Authorization header is not 'Bearer <jwt>'", true);
    const token = match[1] as string;
    if (!isCanonical(token))
      throw unauthenticated('the token is not valid: not in canonical form (unpadded base64url)', true);
    let payload: JWTPayload;
    try {
      payload = await this.verifyToken(token);
    } catch (error) {
      if (error instanceof AuthError) throw error;
      throw refusal(error);
    }
    checkLifetime(payload, this.lifetime);
    return { subject: payload.sub, scopes: scopesOf(payload) };
  }

  /** AuthError (403) unless the principal's scopes grant the access. */
  authorize(principal: Principal, access: Access): void {
    const needed = access.kind === 'read' ? READ_SCOPE : `${WRITE_SCOPE}:${access.entity}`;
    const granted =
      access.kind === 'read'
        ? principal.scopes.has(READ_SCOPE)
        : principal.scopes.has(WRITE_SCOPE) || principal.scopes.has(needed);
    if (granted) return;
    const wanted = access.kind === 'read' ? READ_SCOPE : `${WRITE_SCOPE} or ${needed}`;
    throw new AuthError(
      'EGGMESH_FORBIDDEN',
      `the token does not grant ${wanted}`,
      `${REALM}, error="insufficient_scope", scope="${needed}"`,
    );
  }

  /** Whether a request of this kind must carry a token. */
  guards(access: Access): boolean {
    return access.kind === 'write' ? this.enabled : this.reads;
  }

  /**
   * An onRequest hook that lets the request on only with a token granting `access`, else answers 401/403
   * itself (with `WWW-Authenticate`), before the body is read. `undefined` when the access needs no
   * token, so an open route costs nothing. `respond` shapes the body (GraphQL endpoints answer `errors`).
   */
  hook(
    access: Access,
    respond: (reply: FastifyReply, error: AuthError) => unknown = (reply, error) =>
      reply.send(error.toBody()),
  ): ((request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined>) | undefined {
    if (!this.guards(access)) return undefined;
    return async (request, reply) => {
      try {
        this.authorize(await this.authenticate(request.headers.authorization), access);
        return undefined;
      } catch (error) {
        if (!(error instanceof AuthError)) throw error;
        request.log.debug({ code: error.code, reason: error.message }, 'request refused');
        reply.code(error.statusCode).header('www-authenticate', error.challenge);
        await respond(reply, error);
        return reply;
      }
    };
  }
}
