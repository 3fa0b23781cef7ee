export const MODEL_PROVIDER = Symbol('MODEL_PROVIDER');
