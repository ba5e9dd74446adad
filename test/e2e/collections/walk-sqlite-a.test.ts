// The generic collection suite (walk.ts) on SQLite, half a: users, orders, reviews and API keys.
import { walkSuites } from './walk.js';

walkSuites('sqlite', 'a');
