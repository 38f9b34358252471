// The bundle entry (dist/cli.js): bin/par-identity.js runs main(); scripts/build.mjs renders the man
// page and scripts/sync-readme.mjs the README tables. Everything lives in src/cli/.
export { main, renderManPage, syncReadme } from './cli/main.js';
