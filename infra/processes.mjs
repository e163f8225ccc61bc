import { readdirSync, readFileSync } from 'node:fs';

/**
 * A process and every process under it, from `/proc/<pid>/task/<tid>/children` (Linux): e.g. HAProxy
 * under the wrapper that started it. Shared by the bench (to count their CPU) and the tests.
 * @param {number} pid
 * @returns {number[]}
 */
export function withDescendants(pid) {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    let tasks = [];
    try {
      tasks = readdirSync(`/proc/${out[i]}/task`);
    } catch {}
    for (const task of tasks) {
      let children = '';
      try {
        children = readFileSync(`/proc/${out[i]}/task/${task}/children`, 'utf8');
      } catch {}
      for (const child of children.split(' ')) if (child.trim() !== '') out.push(Number(child));
    }
  }
  return out;
}
