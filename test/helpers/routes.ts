import type { App } from '../../src/app.js';

export interface RouteEntry {
  method: string;
  path: string;
}

/**
 * Every route of the app, from `printRoutes({ commonPrefix: false })`: a tree whose lines are
 * `<indent>├── <segment> (METHOD, …)`, four characters of indent per level, each segment
 * continuing its parent's path.
 */
export function listRoutes(app: App): RouteEntry[] {
  const found: RouteEntry[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^(.*?)(?:├── |└── )(.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    stack.push(match[2]!);
    let path = stack.join('');
    // The tree drops the slash before a wildcard that follows a route of its own (`/console` → `*`).
    if (/[^/]\*$/.test(path) && !app.hasRoute({ method: 'GET', url: path }) && app.hasRoute({ method: 'GET', url: path.replace(/\*$/, '/*') })) path = path.replace(/\*$/, '/*');
    for (const method of (match[3] ?? '').split(',').map((m) => m.trim()).filter(Boolean)) found.push({ method, path });
  }
  return found;
}
