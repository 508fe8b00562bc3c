/* devcode.S: embeds kbench's device code (devcode.fatbin, built by nvcc
 * from devcode.cu) in the binary, as kb_devcode[] of kb_devcode_size bytes. */
	.section .rodata
	.balign 64
	.globl kb_devcode
	.type kb_devcode, @object
kb_devcode:
	.incbin "tools/kbench/devcode.fatbin"
kb_devcode_end:
	.byte 0
	.size kb_devcode, . - kb_devcode
	.balign 8
	.globl kb_devcode_size
	.type kb_devcode_size, @object
kb_devcode_size:
	.quad kb_devcode_end - kb_devcode
	.size kb_devcode_size, 8
	.section .note.GNU-stack,"",@progbits
