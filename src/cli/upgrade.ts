/**
 * `sflow upgrade` (alias `update`): reinstall this sflow in place with npm (cli.md §9.7, mapped
 * to npm): the latest release by default, `--sflow-version V`, a git ref with `--branch`, or a
 * local checkout with `--sflow-source-path DIR` (npm links the folder: edits there take effect,
 * as nv-sflow's editable install). `--sflow-index-url URL` is nv-sflow's private index: for a
 * scoped package only sflow's scope is taken from it, otherwise it is `--registry`.
 * It upgrades the installation that is running (global, or a project's node_modules) and
 * refuses a source checkout or an `npm link`ed copy unless `--force`. `--dry-run` prints the
 * exact command. npm runs with a hard time limit and its own progress output.
 *
 * It only ever installs this package (PACKAGE_NAME, whatever the running copy's package.json is
 * called), and refuses a global upgrade while the global `sflow` command belongs to another
 * package (an install of this tool under its old name `sflow`, or anything else with that
 * command): npm would stop on the clash, or a forced install would take the other's command.
 */
import { existsSync, lstatSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { SflowError } from '../util/sflow-error.js';
import { assetsRoot } from '../config/assets.js';
import { boundedExec } from '../util/bounded-exec.js';
import { PACKAGE_NAME } from '../util/package-name.js';
import { reportError } from './errors.js';

const NPM_QUERY_TIMEOUT_MS = 15_000;
const NPM_INSTALL_TIMEOUT_MS = 10 * 60_000;

export interface InstallFacts {
  /** the package folder of the running sflow, as found (may be a link) */
  packageRoot: string;
  /** the same with links resolved */
  realRoot: string;
  /** `npm root -g`, when known */
  globalRoot?: string;
  name: string;
  version: string;
  /** package.json `repository` URL, for --branch */
  repository?: string;
  /** a `.git` folder in the package folder */
  gitCheckout: boolean;
  /** npm's global `sflow` command (`<prefix>/bin/sflow`), when there is one */
  globalCommand?: GlobalCommand;
}

export interface GlobalCommand {
  path: string;
  /** the package that owns it: the `name` of the package.json above where it leads; absent when none */
  owner?: string;
  /** where it leads (links resolved) */
  target?: string;
}

export interface UpgradeOptions {
  sflowVersion?: string;
  branch?: string;
  repo?: string;
  registry?: string;
  /** nv-sflow's `--sflow-index-url`: a private index for sflow itself (npm: a scope registry) */
  sflowIndexUrl?: string;
  /** nv-sflow's `--sflow-source-path`: install from a local checkout (npm links the folder) */
  sflowSourcePath?: string;
  dryRun?: boolean;
  force?: boolean;
}

const usage = (message: string, hint: string) =>
  new SflowError('upgrade.options', message, { phase: 'usage', hint });

/** a registry URL with a user or password in it is refused: it would show in ps and the printed command */
function checkRegistryUrl(flag: string, url: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw usage(`${flag}: '${url}' is not a URL`, 'e.g. https://npm.example.com/');
  }
  if (u.username || u.password)
    throw usage(
      `${flag}: the URL carries credentials; they would show on a command line`,
      `put the token in ~/.npmrc instead: //${u.host}${u.pathname.replace(/\/?$/, '/')}:_authToken=<token>`,
    );
}

/**
 * The registry arguments: `--registry URL`, or for `--sflow-index-url` on a scoped package
 * `--@scope:registry=URL` (only sflow comes from it, its dependencies from the default registry,
 * as nv-sflow's extra index does; an unscoped package can only switch the whole registry).
 */
export function registryArgs(name: string, o: UpgradeOptions): string[] {
  if (o.registry && o.sflowIndexUrl)
    throw usage('--registry and --sflow-index-url cannot be used together', 'give one registry');
  if (o.registry) {
    checkRegistryUrl('--registry', o.registry);
    return ['--registry', o.registry];
  }
  if (!o.sflowIndexUrl) return [];
  checkRegistryUrl('--sflow-index-url', o.sflowIndexUrl);
  const scope = /^(@[^/]+)\//.exec(name)?.[1];
  return scope ? [`--${scope}:registry=${o.sflowIndexUrl}`] : ['--registry', o.sflowIndexUrl];
}

/** `--sflow-source-path DIR`: an absolute folder holding this package (same name) */
function sourceSpec(name: string, dir: string): string {
  const abs = resolve(dir);
  const pkgFile = join(abs, 'package.json');
  if (!existsSync(pkgFile))
    throw usage(`--sflow-source-path: ${abs} has no package.json`, 'name the folder of an sflow checkout');
  let got: string | undefined;
  try {
    got = (JSON.parse(readFileSync(pkgFile, 'utf8')) as { name?: string }).name;
  } catch {
    got = undefined;
  }
  if (got !== name)
    throw usage(
      `--sflow-source-path: ${abs} holds ${got ? `the package '${got}'` : 'no readable package.json'}, not '${name}'`,
      'name the folder of an sflow checkout',
    );
  return abs;
}

export interface UpgradePlan {
  argv: string[];
  /** what is being upgraded, in words */
  scope: string;
}

function gitUrl(repo: string): string {
  const u = repo.replace(/^git\+/, '');
  return u.startsWith('git@') || u.includes('://') ? `git+${u}` : `github:${u}`;
}

/** The npm command that upgrades this installation; throws a user error when it must not. */
export function planUpgrade(f: InstallFacts, o: UpgradeOptions): UpgradePlan {
  const picks = (
    [
      ['--sflow-version', o.sflowVersion],
      ['--branch', o.branch],
      ['--sflow-source-path', o.sflowSourcePath],
    ] as const
  ).filter(([, v]) => v);
  if (picks.length > 1)
    throw usage(
      `${picks.map(([f]) => f).join(' and ')} cannot be used together`,
      '--sflow-version picks a published release, --branch a git ref, --sflow-source-path a local checkout',
    );
  if (o.sflowSourcePath && (o.registry || o.sflowIndexUrl))
    throw usage(
      '--sflow-source-path installs a local folder: no registry is asked',
      'drop --registry / --sflow-index-url',
    );
  const inNodeModules = f.realRoot.split(sep).includes('node_modules');
  const linked = f.realRoot !== f.packageRoot && inNodeModules === false;
  if ((f.gitCheckout || !inNodeModules) && !o.force)
    throw new SflowError(
      'upgrade.dev_install',
      `this sflow runs from ${linked ? 'a linked' : 'a source'} checkout (${f.realRoot}), not from an npm installation`,
      {
        hint: 'update it with git (git pull && npm install), or pass --force to install the npm package globally anyway',
      },
    );
  let spec: string;
  if (o.sflowSourcePath) spec = sourceSpec(PACKAGE_NAME, o.sflowSourcePath);
  else if (o.branch) {
    const repo = o.repo ?? f.repository;
    if (!repo)
      throw new SflowError('upgrade.no_repo', 'this sflow does not record its git repository', {
        phase: 'usage',
        hint: 'name it: --repo https://host/owner/sflow.git',
      });
    spec = `${gitUrl(repo)}#${o.branch}`;
  } else spec = `${PACKAGE_NAME}@${o.sflowVersion ?? 'latest'}`;
  const registry = registryArgs(PACKAGE_NAME, o);
  const global =
    !inNodeModules ||
    (f.globalRoot !== undefined && dirname(f.packageRoot) === f.globalRoot) ||
    (f.globalRoot !== undefined && dirname(f.realRoot) === f.globalRoot);
  if (global) {
    refuseForeignCommand(f.globalCommand);
    return { argv: ['npm', 'install', '--global', ...registry, spec], scope: `the global installation` };
  }
  // <project>/node_modules/<name> (or node_modules/@scope/<name>)
  const parts = f.packageRoot.split(sep);
  const nm = parts.lastIndexOf('node_modules');
  const project = parts.slice(0, nm).join(sep) || sep;
  return {
    argv: ['npm', 'install', '--prefix', project, ...registry, spec],
    scope: `the project installation in ${project}`,
  };
}

/** A global `sflow` command of another package is never replaced (not even with --force). */
function refuseForeignCommand(c: GlobalCommand | undefined): void {
  if (!c || c.owner === PACKAGE_NAME) return;
  const what = c.owner
    ? `belongs to the npm package '${c.owner}'${c.target ? ` (${c.target})` : ''}`
    : `is not a command of an npm package${c.target ? ` (it leads to ${c.target})` : ''}`;
  throw new SflowError(
    'upgrade.foreign_command',
    `the global \`sflow\` command ${c.path} ${what}, not to ${PACKAGE_NAME}`,
    {
      hint: c.owner
        ? `remove it first (npm uninstall --global ${c.owner}), then: npm install --global ${PACKAGE_NAME}`
        : `remove or rename ${c.path} first, then: npm install --global ${PACKAGE_NAME}`,
    },
  );
}

/** The package.json `name` nearest above `file` (at most 6 folders up). */
function owningPackage(file: string): string | undefined {
  let dir = dirname(file);
  for (let i = 0; i < 6; i++, dir = dirname(dir)) {
    try {
      return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string }).name;
    } catch {
      if (dirname(dir) === dir) break;
    }
  }
  return undefined;
}

/** `<prefix>/bin/sflow` of npm's global prefix (`<prefix>/lib/node_modules` is the global root). */
export function globalCommand(globalRoot: string): GlobalCommand | undefined {
  const path = join(dirname(dirname(globalRoot)), 'bin', 'sflow');
  try {
    lstatSync(path);
  } catch {
    return undefined;
  }
  let target: string | undefined;
  try {
    target = realpathSync(path);
  } catch {
    return { path }; // a dangling link
  }
  return { path, target, owner: target === path ? undefined : owningPackage(target) };
}

function packageFacts(): InstallFacts {
  const packageRoot = dirname(assetsRoot({}));
  const pkg = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
    repository?: string | { url?: string };
  };
  const repository = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
  return {
    packageRoot,
    realRoot: realpathSync(packageRoot),
    name: pkg.name,
    version: pkg.version,
    repository,
    gitCheckout: existsSync(join(packageRoot, '.git')),
  };
}

async function npmGlobalRoot(): Promise<string | undefined> {
  const r = await boundedExec('npm', ['root', '--global'], { timeoutMs: NPM_QUERY_TIMEOUT_MS, retries: 1 });
  return r.ok ? r.stdout.trim() || undefined : undefined;
}

function quote(a: string): string {
  return /^[\w@%+=:,./#-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}

export async function upgradeCommand(opts: UpgradeOptions): Promise<number> {
  try {
    const facts = packageFacts();
    facts.globalRoot = await npmGlobalRoot();
    if (facts.globalRoot) facts.globalCommand = globalCommand(facts.globalRoot);
    const plan = planUpgrade(facts, opts);
    const command = plan.argv.map(quote).join(' ');
    process.stdout.write(`sflow ${facts.version} at ${facts.realRoot} (${plan.scope})\n`);
    if (opts.dryRun) {
      process.stdout.write(`would run: ${command}\n`);
      return 0;
    }
    process.stdout.write(`running: ${command}\n`);
    const { execa } = await import('execa');
    const r = await execa(plan.argv[0], plan.argv.slice(1), {
      stdio: 'inherit',
      reject: false,
      timeout: NPM_INSTALL_TIMEOUT_MS,
      forceKillAfterDelay: 5_000,
    });
    if (r.timedOut) {
      process.stderr.write(
        `✗ npm did not finish within ${NPM_INSTALL_TIMEOUT_MS / 60_000} minutes; stopped it\n`,
      );
      return 1;
    }
    if (r.exitCode !== 0) {
      process.stderr.write(`✗ npm exited with ${r.exitCode ?? r.signal}; sflow was not upgraded\n`);
      return 1;
    }
    process.stdout.write('✓ sflow upgraded; `sflow --version` shows the new version\n');
    return 0;
  } catch (e) {
    return reportError(e, 'Upgrade refused');
  }
}
