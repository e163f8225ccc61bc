import { describe, expect, it } from 'vitest';
import { csvRows, parseCsv } from '../src/csv.js';

describe('the portal reads CSV files', () => {
  it('reads quoted cells, doubled quotes, commas and line breaks in quotes, CRLF and a byte order mark', () => {
    const text = '\uFEFFname,note\r\n"Hen, the first","said ""cluck""\ntwice"\r\n\r\nplain,\n';
    expect(parseCsv(text)).toEqual([
      { line: 1, cells: ['name', 'note'] },
      { line: 2, cells: ['Hen, the first', 'said "cluck"\ntwice'] },
      { line: 5, cells: ['plain', ''] },
    ]);
  });

  it('reads a last line without a line end, and refuses a quote left open', () => {
    expect(parseCsv('a,b\n1,2')).toEqual([
      { line: 1, cells: ['a', 'b'] },
      { line: 2, cells: ['1', '2'] },
    ]);
    expect(() => parseCsv('a\n"open')).toThrow('line 2: a quoted cell is not closed');
  });

  it('makes API bodies: header fields, empty cells left out, numbers as numbers only where they are', () => {
    const rows = csvRows('hen_id,eggs,quality\nh1,3,\nh2,three,cracked\nh3,,grade_a', ['eggs']);
    expect(rows).toEqual([
      { line: 2, body: { hen_id: 'h1', eggs: 3 } },
      { line: 3, body: { hen_id: 'h2', eggs: 'three', quality: 'cracked' } },
      { line: 4, body: { hen_id: 'h3', quality: 'grade_a' } },
    ]);
    expect(() => csvRows('', [])).toThrow('the file is empty');
  });
});
