import { randomBytes } from 'node:crypto';
import type { JsonListField } from '@eggmesh/store';
import type { FieldNode, GraphQLResolveInfo } from 'graphql';
import { getNamedType, isNonNullType, isObjectType, Kind } from './runtime.js';

/**
 * Root lists answered as JSON text built by the store (`JsonListReader`): when a root list field
 * selects only plain fields of current entity rows, the store returns the whole array as one string,
 * the resolver hands GraphQL an empty list in its place, and the response is spliced together when
 * serialized. No object per row is built, read or stringified. Anything else (relations, fragments,
 * directives, `__typename`, projections, `at`) takes the ordinary path.
 */

const scalarTypes: Readonly<Record<string, JsonListField['type']>> = {
  ID: 'id',
  String: 'string',
  Int: 'int',
  Float: 'float',
  Boolean: 'boolean',
};

/** The selections planned so far (parsed documents are cached, so their field nodes are reused). */
const plans = new WeakMap<FieldNode, readonly JsonListField[] | null>();

/** The plain fields a root list selects, or undefined when it cannot be answered as JSON text. */
export function jsonFieldsOf(info: GraphQLResolveInfo): readonly JsonListField[] | undefined {
  if (info.path.prev !== undefined || info.fieldNodes.length !== 1) return undefined;
  const node = info.fieldNodes[0] as FieldNode;
  let plan = plans.get(node);
  if (plan === undefined) {
    plan = plan_(info, node) ?? null;
    plans.set(node, plan);
  }
  return plan ?? undefined;
}

function plan_(info: GraphQLResolveInfo, node: FieldNode): readonly JsonListField[] | undefined {
  if (node.directives?.length) return undefined;
  const type = getNamedType(info.returnType);
  if (!isObjectType(type) || !node.selectionSet) return undefined;
  const definitions = type.getFields();
  const fields: JsonListField[] = [];
  const keys = new Set<string>();
  for (const selection of node.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD || selection.directives?.length || selection.selectionSet)
      return undefined;
    const name = selection.name.value;
    const definition = definitions[name];
    const scalar = definition && scalarTypes[getNamedType(definition.type).name];
    if (!scalar || selection.arguments?.length) return undefined;
    const key = selection.alias?.value ?? name;
    if (key.startsWith('__')) return undefined;
    // The same key twice is one field in the answer (validation made sure they agree).
    if (keys.has(key)) continue;
    keys.add(key);
    if (name === 'id') fields.push({ key, source: 'id', type: 'id', nullable: false });
    else if (scalar === 'id') return undefined;
    else fields.push({ key, source: name, type: scalar, nullable: !isNonNullType(definition.type) });
  }
  return fields.length > 0 ? fields : undefined;
}

/** Stands in an answer for a list's JSON text until the response is serialized. */
class JsonText {
  constructor(readonly token: string) {}
  toJSON(): string {
    return this.token;
  }
}

/** Unguessable, so no stored string can be mistaken for a placeholder. */
const NONCE = randomBytes(12).toString('hex');
let counter = 0;

/**
 * Puts each root list's JSON text (by response key) into `data` and returns the serializer that
 * splices them into the response, or undefined when there is nothing to splice.
 */
export function spliceJsonLists(
  data: Record<string, unknown>,
  lists: ReadonlyMap<string, string>,
): ((payload: unknown) => string) | undefined {
  const parts: Array<{ quoted: string; json: string }> = [];
  for (const [key, json] of lists) {
    const value = data[key];
    if (!Array.isArray(value) || value.length !== 0) continue;
    counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
    const token = `\u0000eggmesh-json-${NONCE}-${counter}`;
    data[key] = new JsonText(token);
    parts.push({ quoted: JSON.stringify(token), json });
  }
  if (parts.length === 0) return undefined;
  return (payload) => {
    let text = JSON.stringify(payload);
    for (const { quoted, json } of parts) {
      const at = text.indexOf(quoted);
      if (at >= 0) text = text.slice(0, at) + json + text.slice(at + quoted.length);
    }
    return text;
  };
}
