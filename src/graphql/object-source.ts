// What an object type's fields resolve from: the object as the services loaded it, and a secret a mutation revealed once.
import type { Loaded } from '../services/access.js';

export type ObjectSource = Loaded & { reveal?: Record<string, unknown> };
