// The code blocks of README.md and docs/*.md as programs, so that a test can type-check them under
// `tsc --strict` and run them as a user would (importing 'weft', the built package). The rules a
// guide follows are in docs/README.md ("Code in the guides").

/** One ```ts block of a guide. */
export interface DocBlock {
  readonly doc: string;
  /** Line of the opening fence (1-based). */
  readonly line: number;
  readonly code: string;
}

/** A program made of one block, or of several when later blocks continue it. */
export interface DocProgram {
  /** A file name for it: doc and line of its first block ('scan.md-42.ts'). */
  readonly name: string;
  readonly doc: string;
  readonly line: number;
  readonly source: string;
  /** Files written beside it (a block whose first line is `// name.mjs: ...`). */
  readonly files: ReadonlyMap<string, string>;
}

/** What a block gets when it imports nothing from 'weft': the guides' stated starting point. */
export const PRELUDE = "import * as weft from 'weft';\nconst { pt } = weft;\n";

const CONTINUES = /^\/\/ continued\b/;
const FILE = /^\/\/ ([\w.-]+\.(?:mjs|js|ts)):/;

export function blocksOf(doc: string, text: string): DocBlock[] {
  const blocks: DocBlock[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```ts') continue;
    const start = i;
    const code: string[] = [];
    for (i++; i < lines.length && lines[i]!.trim() !== '```'; i++) code.push(lines[i]!);
    blocks.push({ doc, line: start + 1, code: code.join('\n') });
  }
  return blocks;
}

/** Groups a guide's blocks into programs (continuations joined, files set aside). */
export function programsOf(blocks: readonly DocBlock[]): DocProgram[] {
  const programs: { doc: string; line: number; parts: string[]; files: Map<string, string> }[] = [];
  let pendingFiles = new Map<string, string>();
  for (const b of blocks) {
    const file = FILE.exec(b.code);
    if (file) {
      pendingFiles.set(file[1]!, b.code);
      continue;
    }
    const last = programs[programs.length - 1];
    if (CONTINUES.test(b.code) && last) {
      last.parts.push(b.code);
      for (const [k, v] of pendingFiles) last.files.set(k, v);
    } else {
      programs.push({ doc: b.doc, line: b.line, parts: [b.code], files: pendingFiles });
    }
    pendingFiles = new Map();
  }
  return programs.map((p) => {
    const body = p.parts.join('\n');
    const imports = /from 'weft'/.test(body);
    return {
      name: `${p.doc.replace(/[^\w.-]/g, '_')}-${p.line}.ts`,
      doc: p.doc,
      line: p.line,
      source: `${imports ? '' : PRELUDE}${hoistImports(body)}\nexport {};\n`,
      files: p.files,
    };
  });
}

/** Whether a program needs a Redis server (it reads process.env.REDIS_URL, which the docs test sets). */
export function needsRedis(p: DocProgram): boolean {
  return /process\.env\.REDIS_URL/.test(p.source);
}

/** Moves import lines to the top and drops repeated ones (continued blocks may repeat them). */
function hoistImports(body: string): string {
  const imports: string[] = [];
  const rest: string[] = [];
  for (const line of body.split('\n')) {
    if (/^import .* from '[^']+';$/.test(line)) {
      if (!imports.includes(line)) imports.push(line);
    } else rest.push(line);
  }
  return [...imports, ...rest].join('\n');
}
