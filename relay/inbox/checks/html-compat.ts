// HTML and CSS compatibility of a captured message against caniemail's data, through
// @jsx-email/doiuse-email. It reports in sentences ("`display:flex` is not supported by
// `outlook.windows`", "Note about `display` support for `gmail.ios`: Partial. ..."); this module
// turns them into features, each with the clients (family.platform) that lack or only partly
// support it, grouped by family, and a score: the share of clients that fully or partly support
// every feature the message uses.
import { DoIUseEmail } from '@jsx-email/doiuse-email';

export interface ClientFamily {
  family: string;
  clients: string[];
}

export interface HtmlCompatibility {
  score: number;
  clients: number;
  features: Array<{ feature: string; unsupported: ClientFamily[]; partial: ClientFamily[] }>;
}

const UNSUPPORTED = /^`(.+)` is not supported by `([^`]+)`$/;
const PARTIAL = /^Note about `(.+)` support for `([^`]+)`: Partial\b/;

function byFamily(clients: Iterable<string>): ClientFamily[] {
  const families = new Map<string, string[]>();
  for (const client of clients) {
    const dot = client.indexOf('.');
    const family = dot < 0 ? client : client.slice(0, dot);
    const platform = dot < 0 ? client : client.slice(dot + 1);
    families.set(family, [...(families.get(family) ?? []), platform]);
  }
  return [...families].map(([family, platforms]) => ({ family, clients: platforms }));
}

/**
 * DoIUseEmail asks caniemail's data about a feature, for every client, each time the HTML uses it
 * (every styled cell's `padding` again) and writes a sentence each time; the answer cannot differ,
 * and this module keeps each feature once. Asking once per feature makes a typical 50 KB template
 * several times faster (bench: the checks section).
 */
class OncePerFeature extends DoIUseEmail {
  private readonly asked = new Set<string>();

  private readonly declarations = new Set<string>();

  override checkFeaturesSupport(featureTitles: string | string[]): void {
    const fresh = [featureTitles].flat().filter((title) => !this.asked.has(title));
    for (const title of fresh) this.asked.add(title);
    if (fresh.length > 0) super.checkFeaturesSupport(fresh);
  }

  /** The features a declaration uses follow from its property and value alone: each pair once. */
  override checkCSSDeclarations(declarations: Parameters<DoIUseEmail['checkCSSDeclarations']>[0]): void {
    const fresh = declarations.filter((d) => {
      const key = `${d.property ?? ''}\u0000${d.value ?? ''}`;
      if (this.declarations.has(key)) return false;
      this.declarations.add(key);
      return true;
    });
    if (fresh.length > 0) super.checkCSSDeclarations(fresh);
  }
}

export function checkHtmlCompatibility(html: string): HtmlCompatibility {
  const checker = new OncePerFeature({ emailClients: ['*'] });
  const allClients = checker.emailClients.length;
  const result = checker.check(html);
  const features = new Map<string, { unsupported: Set<string>; partial: Set<string> }>();
  const entry = (name: string) => {
    let f = features.get(name);
    if (!f) features.set(name, (f = { unsupported: new Set(), partial: new Set() }));
    return f;
  };
  const failing = new Set<string>();
  for (const line of result.success ? [] : result.errors) {
    const m = UNSUPPORTED.exec(line);
    if (!m) continue;
    entry(m[1]!).unsupported.add(m[2]!);
    failing.add(m[2]!);
  }
  for (const line of result.notes) {
    const m = PARTIAL.exec(line);
    if (m && !features.get(m[1]!)?.unsupported.has(m[2]!)) entry(m[1]!).partial.add(m[2]!);
  }
  const list = [...features]
    .map(([feature, f]) => ({ feature, unsupported: byFamily(f.unsupported), partial: byFamily(f.partial), weight: f.unsupported.size * 2 + f.partial.size }))
    .sort((a, b) => b.weight - a.weight || a.feature.localeCompare(b.feature))
    .map(({ weight: _weight, ...f }) => f);
  const score = allClients === 0 ? 100 : Math.round(((allClients - failing.size) / allClients) * 1000) / 10;
  return { score, clients: allClients, features: list };
}
