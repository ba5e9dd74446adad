// The generic collection suite (walk.ts) on SQLite: in-process and over a real socket.
import { MODES } from '../../support/harness.js';
import { walkSuites } from './walk.js';

walkSuites(MODES.filter((mode) => !mode.endsWith('/postgres')));
