// Matches a request to an entry of the route table (routes.ts). An entry answers either ordinary
// requests (a handler) or WebSocket upgrades (an upgrade handler); each kind only sees its own, so
// a plain GET of an upgrade-only path is 404, as openapi.yaml says of /v1/listen.
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Reply, RequestContext } from './context.js';

export type Method = 'GET' | 'POST' | 'DELETE';
export type Handler = (ctx: RequestContext) => Promise<Reply>;

export interface UpgradeRequest {
  req: http.IncomingMessage;
  socket: Duplex;
  head: Buffer;
  url: URL;
  requestId: string;
}
/** Takes the connection over, or throws an ApiError that is answered before the upgrade. */
export type UpgradeHandler = (upgrade: UpgradeRequest) => Promise<void>;

export type Route =
  | { method: Method; path: string; handler: Handler; upgrade?: never }
  | { method: 'GET'; path: string; upgrade: UpgradeHandler; handler?: never };

interface CompiledRoute {
  route: Route;
  regex: RegExp;
  names: string[];
}

/** No entry answers: the path exists with other methods, or not at all. */
export type Miss = { kind: 'method_not_allowed'; allowed: string[] } | { kind: 'not_found' };
export type Match<R extends Route> = { kind: 'found'; route: R; params: Record<string, string> } | Miss;

export class Router {
  private readonly routes: CompiledRoute[];

  constructor(routes: Route[]) {
    this.routes = routes.map((route) => {
      const names: string[] = [];
      const pattern = route.path.replace(/:([a-z_]+)/g, (_, name: string) => {
        names.push(name);
        return '([^/]+)';
      });
      return { route, regex: new RegExp(`^${pattern}$`), names };
    });
  }

  /** An ordinary request. */
  match(method: string, pathname: string): Match<Extract<Route, { handler: Handler }>> {
    return this.find(method, pathname, false) as Match<Extract<Route, { handler: Handler }>>;
  }

  /** A request asking to upgrade the connection. */
  matchUpgrade(method: string, pathname: string): Match<Extract<Route, { upgrade: UpgradeHandler }>> {
    return this.find(method, pathname, true) as Match<Extract<Route, { upgrade: UpgradeHandler }>>;
  }

  private find(method: string, pathname: string, upgrade: boolean): Match<Route> {
    const allowed: string[] = [];
    for (const { route, regex, names } of this.routes) {
      if ((route.upgrade !== undefined) !== upgrade) continue;
      const m = regex.exec(pathname);
      if (!m) continue;
      if (route.method !== method) {
        allowed.push(route.method);
        continue;
      }
      const params: Record<string, string> = {};
      names.forEach((name, i) => {
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
