/** A process and every process under it (Linux `/proc`), the process itself first. */
export function withDescendants(pid: number): number[];
