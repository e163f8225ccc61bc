/**
 * Whether a query string is JSON. Only sources that could start a JSON value other than a GraphQL
 * document get parsed (a thrown JSON.parse per request would cost ~5% of a getById).
 */
export function isJson(source: string): boolean {
  const text = source.trim();
  const first = text[0];
  if (first === undefined || /[a-z#_]/i.test(first))
    return text === 'true' || text === 'false' || text === 'null';
  if (first === '{' && !/^\{\s*["}]/.test(text)) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
