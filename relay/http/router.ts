// The whole route table is assembled in routes.ts; this module only matches.
import type { Reply, RequestContext } from './context.js';

export type Handler = (ctx: RequestContext) => Promise<Reply>;

export interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  /** `/v1/emails/:email_id` style. */
  path: string;
  handler: Handler;
}

interface CompiledRoute extends Route {
  regex: RegExp;
  names: string[];
}

export type Match =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allowed: string[] }
  | { kind: 'not_found' };

export class Router {
  private readonly routes: CompiledRoute[];

  constructor(routes: Route[]) {
    this.routes = routes.map((route) => {
      const names: string[] = [];
      const pattern = route.path.replace(/:([a-z_]+)/g, (_, name: string) => {
        names.push(name);
        return '([^/]+)';
      });
      return { ...route, regex: new RegExp(`^${pattern}$`), names };
    });
  }

  match(method: string, pathname: string): Match {
    const allowed: string[] = [];
    for (const route of this.routes) {
      const m = route.regex.exec(pathname);
      if (!m) continue;
      if (route.method !== method) {
        allowed.push(route.method);
        continue;
      }
      const params: Record<string, string> = {};
      route.names.forEach((name, i) => {
        params[name] = safeDecode(m[i + 1]!);
      });
      return { kind: 'found', route, params };
    }
    return allowed.length > 0 ? { kind: 'method_not_allowed', allowed } : { kind: 'not_found' };
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
