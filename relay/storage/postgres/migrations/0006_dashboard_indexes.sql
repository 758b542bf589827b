-- The dashboard's usage chart: sends of one workspace per day over the last 30 days, without
-- walking every email of the workspace.
CREATE INDEX emails_by_workspace_created ON emails(workspace_id, created_at);
