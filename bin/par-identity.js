#!/usr/bin/env node
import { main } from '../dist/par-identity.js';

await main();
