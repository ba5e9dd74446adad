// The generic collection suite (walk.ts) on SQLite, half b: products, a user's orders and order items, nested and top-level; products over a socket too.
import { walkSuites } from './walk.js';

walkSuites('sqlite', 'b');
