/**
 * `fetch` as the documented client does it: a 503 `EGGMESH_OVERLOADED` is waited out for its
 * `retry-after` and sent again (up to `attempts` times). Services that a test runs in its own process
 * share that process's event loop with the test, so a loaded machine can make them shed load; the
 * answer the test then checks is the one a patient client gets. Any other answer comes back at once.
 */
export async function fetchPastOverload(
  input: string | URL,
  init?: RequestInit,
  attempts = 10,
): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(input, init);
    if (response.status !== 503 || attempt === attempts) return response;
    const body = (await response
      .clone()
      .json()
      .catch(() => ({}))) as { code?: unknown };
    if (body.code !== 'EGGMESH_OVERLOADED') return response;
    await response.arrayBuffer();
    await new Promise((resolve) =>
      setTimeout(resolve, Number(response.headers.get('retry-after') ?? 1) * 1000),
    );
  }
}
