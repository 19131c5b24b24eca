/**
 * Builds the dashboard page (the repository's dashboard/ folder: index.html, src/) with Vite into
 * dashboard/dist on first use (and again whenever its sources change), so a fresh clone needs no
 * separate build step and nothing built is committed. `npm run build` builds it too, and the npm
 * package ships dashboard/dist, so an installed rlvr serves the page without Vite (a devDependency).
 *
 *   node --import tsx src/dashboard/build.ts     # build now (prints the output directory)
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** The dashboard page's folder: <package>/dashboard (the same from src/dashboard/ and dist/dashboard/). */
export const DASHBOARD_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "dashboard");
const STAMP = ".source-hash";

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir).sort()) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) sourceFiles(p, out);
    else out.push(p);
  }
  return out;
}

/** Version of the Vite settings below: bump it when they change, so existing builds are redone. */
const BUILD_SETTINGS = "vite base=./ v1";

/** Hash of everything the page is built from (index.html, src/**, the Vite settings' version). */
export function sourceHash(root = DASHBOARD_ROOT): string {
  const h = createHash("sha256").update(BUILD_SETTINGS).update("\0");
  for (const f of [join(root, "index.html"), ...sourceFiles(join(root, "src"))]) {
    h.update(relative(root, f)).update("\0").update(readFileSync(f)).update("\0");
  }
  return h.digest("hex").slice(0, 16);
}

function upToDate(dir: string, hash: string): boolean {
  try {
    return existsSync(join(dir, "index.html")) && readFileSync(join(dir, STAMP), "utf8") === hash;
  } catch {
    return false;
  }
}

/** A page built with Vite: the dashboard, or the training page of src/browser/ (built.ts there). */
export interface PageSpec {
  /** Short name for log lines and the temp-folder fallback ("dashboard", "play"). */
  name: string;
  /** Vite's root: the folder of the page's index.html; the build goes to <root>/dist. */
  root: string;
  /** Hash of everything the page is built from (the build is redone when it changes). */
  hash: () => string;
  /** More Vite settings (plugins, resolve, build options), merged over the defaults. */
  vite?: () => Promise<import("vite").InlineConfig>;
}

/** The dashboard page (dashboard/index.html, dashboard/src/). */
export const DASHBOARD_PAGE: PageSpec = { name: "dashboard", root: DASHBOARD_ROOT, hash: () => sourceHash() };

/**
 * Make sure a build of the current sources exists and return its directory: dashboard/dist (or
 * `page.root`/dist), or a folder under the OS temp dir when that is not writable. Builds into a
 * temporary folder and renames it into place, so concurrent callers never see a half-written build.
 * @throws Error when Vite is missing or the build fails (the message says how to build by hand).
 */
export async function ensureDashboardBuilt(o: { log?: (msg: string) => void } = {}, page: PageSpec = DASHBOARD_PAGE): Promise<string> {
  const hash = page.hash();
  const candidates = [join(page.root, "dist"), join(tmpdir(), `rlvr-${page.name}-${hash}`)];
  for (const dir of candidates) if (upToDate(dir, hash)) return dir;
  let vite: typeof import("vite");
  try {
    vite = await import("vite");
  } catch (e) {
    throw new Error(`${page.name}: cannot load vite to build the page (${(e as Error).message}); run "npm install" in the rlvr folder`);
  }
  const extra = (await page.vite?.()) ?? {};
  let lastError: unknown;
  for (const dir of candidates) {
    const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
    try {
      mkdirSync(dirname(dir), { recursive: true });
      o.log?.(`${page.name}: building the page with vite → ${dir}`);
      await vite.build({
        ...extra,
        root: page.root,
        base: "./",
        configFile: false,
        logLevel: "warn",
        build: { ...extra.build, outDir: tmp, emptyOutDir: true, sourcemap: false, reportCompressedSize: false },
      });
      writeFileSync(join(tmp, STAMP), hash);
      if (upToDate(dir, hash)) {
        rmSync(tmp, { recursive: true, force: true }); // another process finished first
        return dir;
      }
      rmSync(dir, { recursive: true, force: true });
      try {
        renameSync(tmp, dir);
      } catch (e) {
        rmSync(tmp, { recursive: true, force: true });
        if (!upToDate(dir, hash)) throw e;
      }
      return dir;
    } catch (e) {
      rmSync(tmp, { recursive: true, force: true });
      lastError = e;
    }
  }
  throw new Error(`${page.name}: the page build failed (${(lastError as Error)?.message}); try "npm run build" in the rlvr folder`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.log(await ensureDashboardBuilt({ log: (m) => console.error(m) }));
}
