export interface WorkspaceProject {
  root: string;
  name: string;
  tags: string[];
}
export declare function listProjects(workspaceRoot: string): WorkspaceProject[];
