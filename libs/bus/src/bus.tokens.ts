export const MESSAGE_BUS = Symbol('MESSAGE_BUS');
