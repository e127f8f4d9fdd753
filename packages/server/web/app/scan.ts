/**
 * @module web/app/scan
 * Reads the pairing QR code with the camera: frames from getUserMedia drawn to a canvas and
 * decoded by jsQR (bundled; nothing is fetched). Resolves with the first code's text.
 */
import jsQR from 'jsqr';

export async function scanQr(video: HTMLVideoElement, signal: AbortSignal): Promise<string> {
  const stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: 'environment' }, audio: false });
  try {
    video.srcObject = stream;
    video.muted = true;
    video.playsInline = true;
    await video.play();
    const canvas = document.createElement('canvas');
    const ctx = canvas.getContext('2d', { willReadFrequently: true });
    if (!ctx) throw new Error('no 2D canvas to read the camera with');
    for (;;) {
      if (signal.aborted) throw new DOMException('scan cancelled', 'AbortError');
      await new Promise((r) => requestAnimationFrame(r));
      const w = video.videoWidth;
      const h = video.videoHeight;
      if (!w || !h) continue;
      canvas.width = w;
      canvas.height = h;
      ctx.drawImage(video, 0, 0, w, h);
      const found = jsQR(ctx.getImageData(0, 0, w, h).data, w, h, { inversionAttempts: 'dontInvert' });
      if (found?.data) return found.data;
    }
  } finally {
    for (const t of stream.getTracks()) t.stop();
    video.srcObject = null;
  }
}
