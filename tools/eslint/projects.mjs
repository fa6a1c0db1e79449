// Reads every project.json in the workspace so that lint rules follow the projects' tags:
// the tags are the single source of truth for which files are domain code.
import { readdirSync, readFileSync, existsSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const SEARCH_ROOTS = ['apps', 'libs', 'tools'];
const MAX_DEPTH = 3;

/** @returns {{root: string, name: string, tags: string[]}[]} */
export function listProjects(workspaceRoot) {
  const projects = [];
  const visit = (dir, depth) => {
    const projectFile = join(dir, 'project.json');
    if (existsSync(projectFile)) {
      const project = JSON.parse(readFileSync(projectFile, 'utf8'));
      projects.push({ root: relative(workspaceRoot, dir), name: project.name, tags: project.tags ?? [] });
    }
    if (depth === MAX_DEPTH) return;
    for (const entry of readdirSync(dir)) {
      if (entry === 'node_modules' || entry.startsWith('.')) continue;
      const child = join(dir, entry);
      if (statSync(child).isDirectory()) visit(child, depth + 1);
    }
  };
  for (const searchRoot of SEARCH_ROOTS) {
    const dir = join(workspaceRoot, searchRoot);
    if (existsSync(dir)) visit(dir, 1);
  }
  return projects;
}
