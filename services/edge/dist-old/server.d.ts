export {};
//# sourceMappingURL=server.d.ts.map
