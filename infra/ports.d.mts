/** A TCP port no one listens on right now on 127.0.0.1 (the kernel's pick). */
export function freePort(): Promise<number>;
