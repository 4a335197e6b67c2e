// Gemini on Google Vertex AI (Python: wires/gemini_vertex.py): the Gemini API's `generateContent` body
// (renderGemini in gemini.ts; every content carries its role, as Vertex requires). The wire's class is wire.ts
// `GeminiVertexWire` (family `gemini`, no batch format).

export { genaiKwargs, renderGemini as renderGeminiVertex } from "./gemini.js";
