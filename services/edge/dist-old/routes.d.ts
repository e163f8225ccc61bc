/** Which service answers a path: REST and its docs go to the write-api, GraphQL to the read-api. */
export type Upstream = 'write' | 'read';
export declare function upstreamFor(path: string): Upstream | null;
//# sourceMappingURL=routes.d.ts.map
