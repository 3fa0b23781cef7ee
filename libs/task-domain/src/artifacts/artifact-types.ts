// Content type and category of an artifact, by extension (docs/api.md "Artifacts").

const TYPES: Record<string, { mimeType: string; category: string }> = {
  '.csv': { mimeType: 'text/csv', category: 'csv' },
  '.md': { mimeType: 'text/markdown', category: 'markdown' },
  '.markdown': { mimeType: 'text/markdown', category: 'markdown' },
  '.json': { mimeType: 'application/json', category: 'json' },
  '.txt': { mimeType: 'text/plain', category: 'text' },
  '.log': { mimeType: 'text/plain', category: 'text' },
  '.html': { mimeType: 'text/html', category: 'html' },
  '.htm': { mimeType: 'text/html', category: 'html' },
  '.pdf': { mimeType: 'application/pdf', category: 'pdf' },
  '.png': { mimeType: 'image/png', category: 'image' },
  '.jpg': { mimeType: 'image/jpeg', category: 'image' },
  '.jpeg': { mimeType: 'image/jpeg', category: 'image' },
  '.gif': { mimeType: 'image/gif', category: 'image' },
  '.webp': { mimeType: 'image/webp', category: 'image' },
  '.svg': { mimeType: 'image/svg+xml', category: 'image' },
  '.zip': { mimeType: 'application/zip', category: 'archive' },
  '.gz': { mimeType: 'application/gzip', category: 'archive' },
  '.tar': { mimeType: 'application/x-tar', category: 'archive' },
  '.tgz': { mimeType: 'application/gzip', category: 'archive' },
};

const CODE = new Set([
  '.ts',
  '.js',
  '.mjs',
  '.cjs',
  '.py',
  '.go',
  '.rs',
  '.java',
  '.c',
  '.h',
  '.cpp',
  '.rb',
  '.sh',
  '.sql',
  '.yaml',
  '.yml',
  '.xml',
  '.css',
  '.tsx',
  '.jsx',
]);

/** `.md` of `notes/a.md`; empty for `Makefile` or `.env` (as path.extname, without Node in the domain). */
function extensionOf(fileName: string): string {
  const base = fileName.slice(fileName.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot).toLowerCase() : '';
}

export function artifactTypeOf(fileName: string): { mimeType: string; category: string } {
  const ext = extensionOf(fileName);
  if (TYPES[ext]) return TYPES[ext];
  if (CODE.has(ext)) return { mimeType: ext === '.xml' ? 'application/xml' : 'text/plain', category: 'code' };
  return { mimeType: 'application/octet-stream', category: 'other' };
}
