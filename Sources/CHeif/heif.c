#include "CHeif.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// MARK: libheif, loaded at the first HEIF file

/// libheif is opened when the first HEIF (or ISO media) file is read, not when photod starts: its
/// plugins register at load (libde265's tables alone were 25 million of the 44 million
/// instructions of `photod --version`), and it maps libde265, x265, libaom and dav1d. photod
/// defines the libheif functions it calls (these, with heif.h's prototypes: the compiler checks
/// them) and does not link libheif; each one opens it once and calls its own.
#define HEIF_FUNCTIONS(X) \
    X(heif_check_filetype) \
    X(heif_context_add_exif_metadata) \
    X(heif_context_alloc) \
    X(heif_context_encode_image) \
    X(heif_context_encode_thumbnail) \
    X(heif_context_free) \
    X(heif_context_get_encoder_for_format) \
    X(heif_context_get_primary_image_handle) \
    X(heif_context_read_from_memory) \
    X(heif_context_read_from_memory_without_copy) \
    X(heif_context_read_from_reader) \
    X(heif_context_set_max_decoding_threads) \
    X(heif_context_write_to_file) \
    X(heif_decode_image) \
    X(heif_decoding_options_alloc) \
    X(heif_decoding_options_free) \
    X(heif_deinit) \
    X(heif_encoder_release) \
    X(heif_encoder_set_lossy_quality) \
    X(heif_encoding_options_alloc) \
    X(heif_encoding_options_free) \
    X(heif_image_add_plane) \
    X(heif_image_create) \
    X(heif_image_get_height) \
    X(heif_image_get_plane) \
    X(heif_image_get_plane_readonly) \
    X(heif_image_get_width) \
    X(heif_image_handle_get_height) \
    X(heif_image_handle_get_list_of_thumbnail_IDs) \
    X(heif_image_handle_get_number_of_thumbnails) \
    X(heif_image_handle_get_thumbnail) \
    X(heif_image_handle_get_width) \
    X(heif_image_handle_has_alpha_channel) \
    X(heif_image_handle_release) \
    X(heif_image_release) \
    X(heif_init)

static struct {
#define FIELD(name) __typeof__(name) *name;
    HEIF_FUNCTIONS(FIELD)
#undef FIELD
} real;

static int loaded;
static char failure[512];

/// Once per process: opens libheif 1.x (the soname of every 1.x release; heif.h is 1.x's, and
/// the package depends on the libheif1 the build used) and finds every function.
static void load(void) {
#if LIBHEIF_NUMERIC_VERSION >> 24 != 1
#error "libheif 1.x only: the soname below"
#endif
    void *lib = dlopen("libheif.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(failure, sizeof failure, "libheif cannot be loaded: %s", dlerror());
        return;
    }
#define FIND(name) \
    if (!(real.name = (__typeof__(name) *)dlsym(lib, #name))) { \
        snprintf(failure, sizeof failure, "libheif has no %s", #name); \
        return; \
    }
    HEIF_FUNCTIONS(FIND)
#undef FIND
    loaded = 1;
}

static int heif_loaded(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, load);
    return loaded;
}

const char *photod_heif_failure(void) { return heif_loaded() ? NULL : failure; }

/// What a function that returns an error says when libheif is not there.
static struct heif_error unavailable(void) {
    struct heif_error e = {heif_error_Unsupported_feature, heif_suberror_Unspecified, failure};
    return e;
}

// MARK: The functions

#define ERROR_CALL(name, ...) return heif_loaded() ? real.name(__VA_ARGS__) : unavailable()
#define VALUE_CALL(name, none, ...) return heif_loaded() ? real.name(__VA_ARGS__) : (none)
#define VOID_CALL(name, ...) if (heif_loaded()) real.name(__VA_ARGS__)

enum heif_filetype_result heif_check_filetype(const uint8_t *data, int len) {
    VALUE_CALL(heif_check_filetype, heif_filetype_no, data, len);
}

struct heif_error heif_context_add_exif_metadata(struct heif_context *c, const struct heif_image_handle *image_handle,
                                                 const void *data, int size) {
    ERROR_CALL(heif_context_add_exif_metadata, c, image_handle, data, size);
}

struct heif_context *heif_context_alloc(void) { VALUE_CALL(heif_context_alloc, NULL); }

struct heif_error heif_context_encode_image(struct heif_context *c, const struct heif_image *image,
                                            struct heif_encoder *encoder, const struct heif_encoding_options *options,
                                            struct heif_image_handle **out_image_handle) {
    ERROR_CALL(heif_context_encode_image, c, image, encoder, options, out_image_handle);
}

struct heif_error heif_context_encode_thumbnail(struct heif_context *c, const struct heif_image *image,
                                                const struct heif_image_handle *master_image_handle,
                                                struct heif_encoder *encoder, const struct heif_encoding_options *options,
                                                int bbox_size, struct heif_image_handle **out_thumb_image_handle) {
    ERROR_CALL(heif_context_encode_thumbnail, c, image, master_image_handle, encoder, options, bbox_size,
               out_thumb_image_handle);
}

void heif_context_free(struct heif_context *c) { VOID_CALL(heif_context_free, c); }

struct heif_error heif_context_get_encoder_for_format(struct heif_context *context,
                                                      enum heif_compression_format format,
                                                      struct heif_encoder **encoder) {
    ERROR_CALL(heif_context_get_encoder_for_format, context, format, encoder);
}

struct heif_error heif_context_get_primary_image_handle(struct heif_context *ctx, struct heif_image_handle **handle) {
    ERROR_CALL(heif_context_get_primary_image_handle, ctx, handle);
}

struct heif_error heif_context_read_from_memory(struct heif_context *c, const void *mem, size_t size,
                                                const struct heif_reading_options *options) {
    ERROR_CALL(heif_context_read_from_memory, c, mem, size, options);
}

struct heif_error heif_context_read_from_memory_without_copy(struct heif_context *c, const void *mem, size_t size,
                                                             const struct heif_reading_options *options) {
    ERROR_CALL(heif_context_read_from_memory_without_copy, c, mem, size, options);
}

struct heif_error heif_context_read_from_reader(struct heif_context *c, const struct heif_reader *reader,
                                                void *userdata, const struct heif_reading_options *options) {
    ERROR_CALL(heif_context_read_from_reader, c, reader, userdata, options);
}

void heif_context_set_max_decoding_threads(struct heif_context *ctx, int max_threads) {
    VOID_CALL(heif_context_set_max_decoding_threads, ctx, max_threads);
}

struct heif_error heif_context_write_to_file(struct heif_context *c, const char *filename) {
    ERROR_CALL(heif_context_write_to_file, c, filename);
}

struct heif_error heif_decode_image(const struct heif_image_handle *in_handle, struct heif_image **out_img,
                                    enum heif_colorspace colorspace, enum heif_chroma chroma,
                                    const struct heif_decoding_options *options) {
    ERROR_CALL(heif_decode_image, in_handle, out_img, colorspace, chroma, options);
}

struct heif_decoding_options *heif_decoding_options_alloc(void) { VALUE_CALL(heif_decoding_options_alloc, NULL); }

void heif_decoding_options_free(struct heif_decoding_options *options) { VOID_CALL(heif_decoding_options_free, options); }

void heif_deinit(void) { VOID_CALL(heif_deinit); }

void heif_encoder_release(struct heif_encoder *encoder) { VOID_CALL(heif_encoder_release, encoder); }

struct heif_error heif_encoder_set_lossy_quality(struct heif_encoder *encoder, int quality) {
    ERROR_CALL(heif_encoder_set_lossy_quality, encoder, quality);
}

struct heif_encoding_options *heif_encoding_options_alloc(void) { VALUE_CALL(heif_encoding_options_alloc, NULL); }

void heif_encoding_options_free(struct heif_encoding_options *options) { VOID_CALL(heif_encoding_options_free, options); }

struct heif_error heif_image_add_plane(struct heif_image *image, enum heif_channel channel, int width, int height,
                                       int bit_depth) {
    ERROR_CALL(heif_image_add_plane, image, channel, width, height, bit_depth);
}

struct heif_error heif_image_create(int width, int height, enum heif_colorspace colorspace, enum heif_chroma chroma,
                                    struct heif_image **out_image) {
    ERROR_CALL(heif_image_create, width, height, colorspace, chroma, out_image);
}

int heif_image_get_height(const struct heif_image *image, enum heif_channel channel) {
    VALUE_CALL(heif_image_get_height, -1, image, channel);
}

uint8_t *heif_image_get_plane(struct heif_image *image, enum heif_channel channel, int *out_stride) {
    VALUE_CALL(heif_image_get_plane, NULL, image, channel, out_stride);
}

const uint8_t *heif_image_get_plane_readonly(const struct heif_image *image, enum heif_channel channel,
                                             int *out_stride) {
    VALUE_CALL(heif_image_get_plane_readonly, NULL, image, channel, out_stride);
}

int heif_image_get_width(const struct heif_image *image, enum heif_channel channel) {
    VALUE_CALL(heif_image_get_width, -1, image, channel);
}

int heif_image_handle_get_height(const struct heif_image_handle *handle) {
    VALUE_CALL(heif_image_handle_get_height, 0, handle);
}

int heif_image_handle_get_list_of_thumbnail_IDs(const struct heif_image_handle *handle, heif_item_id *ids, int count) {
    VALUE_CALL(heif_image_handle_get_list_of_thumbnail_IDs, 0, handle, ids, count);
}

int heif_image_handle_get_number_of_thumbnails(const struct heif_image_handle *handle) {
    VALUE_CALL(heif_image_handle_get_number_of_thumbnails, 0, handle);
}

struct heif_error heif_image_handle_get_thumbnail(const struct heif_image_handle *main_image_handle,
                                                  heif_item_id thumbnail_id,
                                                  struct heif_image_handle **out_thumbnail_handle) {
    ERROR_CALL(heif_image_handle_get_thumbnail, main_image_handle, thumbnail_id, out_thumbnail_handle);
}

int heif_image_handle_get_width(const struct heif_image_handle *handle) {
    VALUE_CALL(heif_image_handle_get_width, 0, handle);
}

int heif_image_handle_has_alpha_channel(const struct heif_image_handle *handle) {
    VALUE_CALL(heif_image_handle_has_alpha_channel, 0, handle);
}

void heif_image_handle_release(const struct heif_image_handle *handle) { VOID_CALL(heif_image_handle_release, handle); }

void heif_image_release(const struct heif_image *image) { VOID_CALL(heif_image_release, image); }

struct heif_error heif_init(struct heif_init_params *params) { ERROR_CALL(heif_init, params); }
