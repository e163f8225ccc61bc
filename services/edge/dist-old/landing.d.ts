export declare function landingPage(): string;
export declare function apiGuideText(): string | null;
//# sourceMappingURL=landing.d.ts.map
