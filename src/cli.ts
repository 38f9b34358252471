// The bundle entry (dist/cli.js): bin/par-identity.js runs main(); scripts/build.mjs renders the man
// page and the help texts of dist/help.js (the launcher's fast path) and scripts/sync-readme.mjs the README tables. Everything lives in src/cli/.
export { main, renderHelpModule, renderManPage, syncReadme } from './cli/main.js';
